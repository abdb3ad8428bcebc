import type Database from 'better-sqlite3';
import {
  AUDIT_RETENTION_MS,
  type AuditEntry,
  type AuditPage,
  type ChildOutcome,
  type ChildrenPage,
  type Commit,
  type CommitResult,
  changeAllowed,
  countAfter,
  type Delivery,
  type DeliveryPage,
  type DeliveryQuery,
  definitionText,
  type FanCounts,
  followUpNotNeeded,
  heldReplyNote,
  isListedStatus,
  type JobJson,
  type JobPage,
  type JobQuery,
  type JobRecord,
  type JobRecordText,
  type JobStatus,
  jobFromJson,
  jobRecordText,
  type LimitChange,
  type ListedStatus,
  listedStatusOf,
  type NamespaceSettings,
  type OutboxPage,
  type QueuedJob,
  type ReplyDeaths,
  type RunningCount,
  type Store,
  type StoredToken,
  type StoredWorkflow,
  storedStatusesOf,
  type Timer,
  type TreeState,
  treeChangeAllowed,
  versionToSave,
  type WorkflowDefinition,
  type WorkflowSummary,
  zeroListedCounts,
  zeroRunningCount,
} from '../../../engine/index.js';
import { openSqliteDatabase, type SqliteOpenOptions, type SqliteSynchronous } from './connection.js';
import { DeliveryTable } from './deliveries.js';
import { DEFAULT_JOB_CACHE_SIZE, JobCache } from './job-cache.js';
import { JobCountChanges } from './job-count-changes.js';
import { encodeJobCursor, jobQuerySql } from './job-query.js';
import { NamespaceSettingsTable } from './namespace-settings.js';
import {
  auditEntry,
  auditRowValues,
  fanCountsOf,
  jobRow,
  outboxEntry,
  outboxRow,
  queuedJobOf,
  runningCountOf,
  storedToken,
  storedWorkflow,
  timerKeyRow,
  timerOf,
  timerRow,
  tokenRow,
} from './rows.js';
import { insertAll, prepareStatements, type SqliteStatements } from './statements.js';
import { WriteOutcome } from './storage-errors.js';
import { CreatesTaken, takenIds } from './taken-ids.js';
import { WriteGroups } from './write-groups.js';

export interface SqliteStoreOptions extends SqliteOpenOptions {
  /**
   * Unfinished jobs kept in memory as last written (0: none); only when the database is opened
   * `exclusive` (no other connection can write it behind the cache's back).
   * @default 20000
   */
  jobCacheSize?: number;
}

/** Retention takes this many top-level jobs at a time, and deletes at most this many jobs per transaction. */
const RETENTION_ROOTS_PER_ROUND = 500;
const RETENTION_JOBS_PER_TRANSACTION = 5_000;

/** Counts a finished child in its parent's counters; undefined when the parent keeps none. */
function countChild(s: SqliteStatements, outcome: ChildOutcome): FanCounts | undefined {
  const completed = outcome.status === 'completed' ? 1 : 0;
  const row = s.countChild.get(completed, 1 - completed, outcome.parentId, outcome.step);
  return row && fanCountsOf(row);
}

function readRunningCount(s: SqliteStatements, workflow: string): RunningCount {
  const row = s.getRunningCount.get(workflow);
  return row ? runningCountOf(row) : zeroRunningCount();
}

/** The engine's status of a job whose row holds `listed` (the jobs table's status column is the listed one). */
function storedStatusOf(listed: string | undefined): JobStatus | undefined {
  return listed !== undefined && isListedStatus(listed) ? storedStatusesOf(listed)[0] : undefined;
}

/** A tree's size and its root's status, as this transaction sees them (engine/job/tree-quota.ts). */
function readTree(s: SqliteStatements, root: string): TreeState {
  return {
    size: s.getTreeSize.get(root) ?? 0,
    rootStatus: storedStatusOf(s.jobStatus.get(root)),
  };
}

/** Writes a `maxRunning` change checked by `changeAllowed` with the counters it was checked on. */
function writeLimit(s: SqliteStatements, change: LimitChange, count: RunningCount): void {
  const after = countAfter(count, change);
  s.setRunningCount.run(change.workflow, after.running, after.queued, after.nextSeq);
  if (change.op === 'enqueue') s.enqueue.run(change.workflow, change.seq, change.jobId);
  else if (change.op === 'promote' || change.op === 'dequeue') s.dequeue.run(change.workflow, change.seq);
}

/**
 * A note of a reply in hand older than this is forgotten: its reply was settled and the note's
 * delete lost, or it never came back. Replies come back within minutes, or not at all.
 */
const REPLY_NOTE_LIFETIME_MS = 7 * 24 * 60 * 60_000;

/** A commit applied inside the transaction: its result, and what the cache keeps once it is written. */
interface AppliedCommit {
  result: CommitResult;
  childrenWritten?: boolean;
  /** The job's record as written, kept with it in the cache for its next revision's text. */
  text?: JobRecordText;
}

/**
 * The Store port on SQLite (better-sqlite3): the local runtime's durable state. Every call runs
 * synchronously on one connection, so a call is never interleaved with another. Commits and outbox
 * acknowledgements are written in groups: all those made in one turn of the event loop go into one
 * transaction (one WAL sync for all of them), each commit applied on its own.
 *
 * A job is one row, its record kept whole as JSON and rewritten whole by each commit (not patched):
 * a record always reads back exactly as written, and a job is small until a fan-in stores a large
 * output. Such a parent is rewritten only by its own few later transitions (children count in
 * `fan_counts`, not in the parent), and every one of them reads the whole record first anyway, so
 * patching would save one write of the size of a read, for the price of assembling records from parts.
 */
export class SqliteStore implements Store {
  private readonly statements: SqliteStatements;
  private readonly namespaces: NamespaceSettingsTable;
  private readonly deliveries: DeliveryTable;
  private readonly jobListings = new Map<string, Database.Statement<unknown[], [number, string, string]>>();
  private readonly writes: WriteGroups;
  private readonly cache: JobCache;
  /** getWorkflow's answers by name and version ('' for the latest); none when not the only writer. */
  private readonly workflowCache?: Map<string, StoredWorkflow>;
  /** Outbox entries acknowledged whose delete is not written yet. */
  private readonly unwrittenAcks = new Set<string>();
  private readonly saveWorkflowVersion: (
    definition: WorkflowDefinition,
    now: number,
  ) => { version: number; created: boolean };
  private readonly deleteJobs: (ids: readonly string[]) => number;
  private readonly withSavepoint: <T>(body: () => T) => T;
  /** What the commits of the write group under way change in the job counts. */
  private readonly countChanges = new JobCountChanges();
  private closed = false;
  private readonly outcome: WriteOutcome;
  private writeTimes?: (seconds: number) => void;

  private constructor(
    private readonly db: Database.Database,
    /** The database file (or `:memory:`). */
    readonly path: string,
    readonly synchronous: SqliteSynchronous,
    /** No other connection writes the file (it is opened `exclusive`): what this store wrote stays so. */
    soleWriter: boolean,
    jobCacheSize: number,
  ) {
    this.statements = prepareStatements(db);
    this.namespaces = new NamespaceSettingsTable(db);
    this.deliveries = new DeliveryTable(db);
    this.cache = new JobCache(soleWriter ? jobCacheSize : 0);
    if (soleWriter) this.workflowCache = new Map();
    // IMMEDIATE: take the write lock at BEGIN, so a transaction never fails half-way on a lock.
    const transaction = db.transaction((body: () => unknown) => {
      try {
        const result = body();
        this.countChanges.write(this.statements.bumpJobCount);
        return result;
      } finally {
        this.countChanges.clear();
      }
    });
    this.outcome = new WriteOutcome(path);
    this.writes = new WriteGroups(<T>(body: () => T) =>
      this.outcome.run(() => {
        const began = performance.now();
        const result = transaction.immediate(body) as T;
        try {
          this.writeTimes?.((performance.now() - began) / 1000);
        } catch {
          // Committed is committed: a listener that throws must not make the write look failed.
        }
        return result;
      }),
    );
    // Called inside the write transaction, this one is a savepoint: one commit can be taken back alone.
    const savepoint = db.transaction((body: () => unknown) => body());
    this.withSavepoint = <T>(body: () => T) => savepoint(body) as T;
    const saveWorkflowVersion = db.transaction((definition: WorkflowDefinition, now: number) =>
      this.saveWorkflowNow(definition, now),
    );
    this.saveWorkflowVersion = (definition, now) => {
      this.workflowCache?.clear();
      return this.outcome.run(() => saveWorkflowVersion.immediate(definition, now));
    };
    const deleteJobs = db.transaction((ids: readonly string[]) => {
      let deleted = 0;
      for (const id of ids) deleted += this.deleteJobRows(id);
      return deleted;
    });
    this.deleteJobs = (ids) => this.outcome.run(() => deleteJobs.immediate(ids));
  }

  /**
   * Opens (creating if needed) the database at `path`, or an in-memory one for `:memory:`. Throws
   * when another process holds it (`exclusive`, the default) or a newer switchyard wrote it.
   */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    return new SqliteStore(
      openSqliteDatabase(path, options),
      path,
      options.synchronous ?? 'FULL',
      options.exclusive ?? true,
      options.jobCacheSize ?? DEFAULT_JOB_CACHE_SIZE,
    );
  }

  /**
   * Tells `listener` how long each write transaction of the commit path took once it committed
   * (transitions, acknowledgements; from BEGIN to the end of COMMIT, the disk's sync included).
   * One listener; undefined removes it. What it throws is ignored.
   */
  timeWrites(listener: ((seconds: number) => void) | undefined): void {
    this.writeTimes = listener;
  }

  /** What the connection runs with, as SQLite reports it (for diagnostics and tests). */
  settings(): { journalMode: string; synchronous: SqliteSynchronous; lockingMode: string } {
    this.ready();
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    return {
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: synchronous === 2 ? 'FULL' : 'NORMAL',
      lockingMode: String(this.db.pragma('locking_mode', { simple: true })),
    };
  }

  async saveWorkflow(
    definition: WorkflowDefinition,
    now: number,
  ): Promise<{ version: number; created: boolean }> {
    this.ready();
    return this.saveWorkflowVersion(definition, now);
  }

  private saveWorkflowNow(
    definition: WorkflowDefinition,
    now: number,
  ): { version: number; created: boolean } {
    const json = definitionText(definition);
    const latest = this.statements.latestWorkflow.get(definition.name);
    this.statements.enableWorkflow.run(definition.name);
    const saved = versionToSave(latest && { version: latest.version, text: latest.definition }, json);
    if (saved.created) this.statements.insertWorkflowVersion.run(definition.name, saved.version, json, now);
    return saved;
  }

  /**
   * Every job start asks for its workflow: while this store is the only writer (`exclusive`),
   * the answer is kept until a workflow is saved or enabled or disabled. The definition is frozen,
   * since every caller then shares it.
   */
  async getWorkflow(name: string, version?: number): Promise<StoredWorkflow | undefined> {
    this.ready();
    const key = `${name}\u0000${version ?? ''}`;
    const cached = this.workflowCache?.get(key);
    if (cached) return { ...cached };
    const row =
      version === undefined
        ? this.statements.latestWorkflow.get(name)
        : this.statements.workflowVersion.get(name, version);
    if (!row) return undefined;
    const stored = storedWorkflow(name, row, this.statements.workflowEnabled.get(name) !== 0);
    if (this.workflowCache) {
      deepFreeze(stored.definition);
      this.workflowCache.set(key, stored);
    }
    return { ...stored };
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    this.ready();
    const summaries: WorkflowSummary[] = [];
    for (const name of this.statements.workflowNames.all()) {
      const latest = this.statements.latestWorkflow.get(name);
      if (!latest) continue;
      const definition = JSON.parse(latest.definition) as WorkflowDefinition;
      const summary: WorkflowSummary = {
        name,
        latestVersion: latest.version,
        enabled: this.statements.workflowEnabled.get(name) !== 0,
        vhosts: definition.vhosts ?? [],
        versions: this.statements.workflowVersions
          .all(name)
          .map((v) => ({ version: v.version, createdAt: v.created_at })),
      };
      if (definition.description) summary.description = definition.description;
      summaries.push(summary);
    }
    return summaries.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Whether some version of the workflow is this definition (as `definitionText` writes it). */
  async hasWorkflowDefinition(name: string, text: string): Promise<boolean> {
    this.ready();
    return this.statements.hasWorkflowDefinition.get(name, text) !== undefined;
  }

  /** serve --config: the definition text the workflow's file gave at the last start, if any. */
  async configDefinition(name: string): Promise<string | undefined> {
    this.ready();
    return this.statements.configDefinition.get(name);
  }

  async rememberConfigDefinition(name: string, text: string): Promise<void> {
    this.ready();
    this.outcome.run(() => this.statements.rememberConfigDefinition.run(name, text));
  }

  async saveToken(token: StoredToken): Promise<boolean> {
    this.ready();
    return this.outcome.run(() => this.statements.insertToken.run(...tokenRow(token)).changes > 0);
  }

  async getToken(id: string): Promise<StoredToken | undefined> {
    this.ready();
    const row = this.statements.token.get(id);
    return row && storedToken(row);
  }

  async listTokens(): Promise<StoredToken[]> {
    this.ready();
    return this.statements.tokens.all().map(storedToken);
  }

  async recordAudit(entry: AuditEntry): Promise<void> {
    this.ready();
    this.outcome.run(() =>
      this.db.transaction(() => {
        this.statements.pruneAudit.run(entry.at - AUDIT_RETENTION_MS);
        this.statements.insertAudit.run(...auditRowValues(entry));
      })(),
    );
  }

  async listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage> {
    this.ready();
    const rows = this.statements.auditPage.all(query.namespace, query.cursor ?? '~', query.limit + 1);
    const entries = rows.slice(0, query.limit).map(auditEntry);
    const last = entries.at(-1);
    return rows.length > query.limit && last ? { entries, cursor: last.id } : { entries };
  }

  async addDeliveries(deliveries: readonly Delivery[]): Promise<void> {
    this.ready();
    this.outcome.run(() => this.deliveries.add(deliveries));
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    this.ready();
    return this.deliveries.dueBy(now, limit);
  }

  async updateDelivery(delivery: Delivery): Promise<boolean> {
    this.ready();
    return this.outcome.run(() => this.deliveries.put(delivery));
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    this.ready();
    return this.deliveries.get(id);
  }

  async jobDeliveries(jobId: string): Promise<Delivery[]> {
    this.ready();
    return this.deliveries.ofJobId(jobId);
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    this.ready();
    return this.deliveries.list(query);
  }

  async deleteToken(id: string): Promise<boolean> {
    this.ready();
    return this.outcome.run(() => this.statements.deleteToken.run(id).changes > 0);
  }

  async getNamespaceSettings(namespace: string): Promise<NamespaceSettings | undefined> {
    this.ready();
    return this.namespaces.get(namespace);
  }

  async listNamespaceSettings(): Promise<NamespaceSettings[]> {
    this.ready();
    return this.namespaces.list();
  }

  async saveNamespaceSettings(settings: NamespaceSettings): Promise<void> {
    this.ready();
    this.outcome.run(() => this.namespaces.put(settings));
  }

  async managerKey(name: string, candidate: string): Promise<string> {
    this.ready();
    return this.outcome.run(() => this.namespaces.managerKey(name, candidate));
  }

  /** serve's schedules: the last tick handled of each schedule of the workflow, by schedule key. */
  async scheduleCursors(workflow: string): Promise<Map<string, number>> {
    this.ready();
    return new Map(this.statements.scheduleCursors.all(workflow));
  }

  /** Moves a schedule's cursor forward (never back: `capScheduleCursor` is the one way back). */
  async setScheduleCursor(workflow: string, schedule: string, tick: number): Promise<void> {
    this.ready();
    this.outcome.run(() => this.statements.setScheduleCursor.run(workflow, schedule, tick));
  }

  /** Moves a schedule's cursor back to `at` if it is later (left by a clock that was ahead). */
  async capScheduleCursor(workflow: string, schedule: string, at: number): Promise<void> {
    this.ready();
    this.outcome.run(() => this.statements.capScheduleCursor.run(at, workflow, schedule, at));
  }

  async setWorkflowEnabled(name: string, enabled: boolean): Promise<boolean> {
    this.ready();
    this.workflowCache?.clear();
    return this.outcome.run(() => this.statements.setWorkflowEnabled.run(enabled ? 1 : 0, name).changes > 0);
  }

  /** The record is shared with the store's cache: never change it. */
  async getJob(id: string): Promise<JobRecord | undefined> {
    this.ready();
    return this.readJob(id);
  }

  /** The records are shared with the store's cache: never change them. */
  async getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    this.ready();
    const found = new Map<string, JobRecord>();
    for (const id of ids) {
      if (found.has(id)) continue;
      const job = this.readJob(id);
      if (job) found.set(id, job);
    }
    return found;
  }

  private readJob(id: string): JobRecord | undefined {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const record = this.statements.getJob.get(id);
    return record === undefined ? undefined : jobFromJson(JSON.parse(record) as JobJson);
  }

  /**
   * Written together with the other writes queued in the same turn of the event loop. The committed
   * jobs are shared with the store's cache: never change them afterwards.
   */
  async commit(commits: readonly Commit[]): Promise<CommitResult[]> {
    this.assertOpen();
    if (!commits.length) return [];
    if (this.unwrittenAcks.size) {
      // Written again after its acknowledgement: the entry is pending anew once this commit is written.
      for (const commit of commits) for (const entry of commit.outbox) this.unwrittenAcks.delete(entry.id);
    }
    const written = await this.writes.add(
      () => commits.map((commit) => this.applyCommit(commit)),
      (applied) => {
        for (const [n, { result, childrenWritten, text }] of applied.entries()) {
          if (!result.ok) continue;
          const commit = commits[n] as Commit;
          this.cache.written(commit.job, text);
          // A fan-out's children started now reply soon; those it created waiting may wait long.
          if (childrenWritten)
            for (const child of commit.creates) if (child.status === 'running') this.cache.written(child);
        }
      },
    );
    return written.map(({ result }) => result);
  }

  /**
   * One commit, inside the caller's transaction. The job's own write is the condition (insert if
   * absent, or update at the expected revision): when it writes nothing, nothing else is written.
   */
  private applyCommit(commit: Commit): AppliedCommit {
    if (!commit.creates.length) return this.applyCommitNow(commit);
    const counted = this.countChanges.mark();
    try {
      return this.withSavepoint(() => this.applyCommitNow(commit));
    } catch (error) {
      this.countChanges.rollBackTo(counted);
      if (error instanceof CreatesTaken) return { result: { ok: false, conflict: false, taken: error.ids } };
      throw error;
    }
  }

  private applyCommitNow(commit: Commit): AppliedCommit {
    const { job, limit } = commit;
    const s = this.statements;
    // The counters' and the tree's conditions first: a commit they refuse writes nothing.
    const count = limit && readRunningCount(s, limit.workflow);
    if (limit && count && !changeAllowed(count, limit)) return { result: { ok: false, conflict: true } };
    const tree = commit.tree;
    if (tree && !treeChangeAllowed(readTree(s, tree.root), tree, job.id))
      return { result: { ok: false, conflict: true } };
    const text = this.writeJob(commit);
    if (!text) return { result: { ok: false, conflict: true } };
    // Children already stored (the same parent, step and index) are left as they are; an id that
    // another job holds takes the whole commit back.
    const childrenWritten =
      insertAll(
        commit.creates,
        (child) => jobRow(child, JSON.stringify(child)),
        s.insertJob,
        s.insertJobs,
      ) === commit.creates.length;
    if (!childrenWritten) {
      const taken = takenIds(s.jobParent, commit.creates);
      if (taken.length) throw new CreatesTaken(taken);
    }
    if (commit.dropUnsent) s.dropUnsentRequests.run(job.id);
    if (limit && count) writeLimit(s, limit, count);
    if (tree?.add) s.addTreeSize.run(tree.root, tree.add);
    const outcome = commit.childOutcome;
    const counts = outcome && countChild(s, outcome);
    let outbox = commit.outbox;
    let leftOut: string[] | undefined;
    if (counts && outbox.some((entry) => followUpNotNeeded(entry, outcome, counts))) {
      leftOut = [];
      outbox = [];
      for (const entry of commit.outbox) {
        if (followUpNotNeeded(entry, outcome, counts)) leftOut.push(entry.id);
        else outbox.push(entry);
      }
    }
    insertAll(outbox, outboxRow, s.insertOutbox, s.insertOutboxes);
    for (const change of commit.timers) {
      if (change.op === 'set') s.setTimer.run(...timerRow(change.timer));
      else s.clearTimer.run(...timerKeyRow(change.key));
    }
    // FAN_INIT_COLUMNS (rows.ts) says where each field goes.
    for (const init of commit.fanInits)
      s.setFanCounts.run(init.parentId, init.step, init.total, init.done, init.failed);
    if (!counts) return { result: { ok: true }, childrenWritten, text };
    return {
      result: leftOut ? { ok: true, fanCounts: counts, leftOut } : { ok: true, fanCounts: counts },
      childrenWritten,
      text,
    };
  }

  /**
   * The job's own row, on its condition (absent, or at the expected revision); for a top-level job,
   * also its search attributes when it is new, and its move in the job counts. Answers the text
   * written, or undefined when the condition refused the write.
   */
  private writeJob(commit: Commit): JobRecordText | undefined {
    const { job, expectedRev } = commit;
    const s = this.statements;
    const cached = expectedRev === 0 ? undefined : this.cache.entry(job.id);
    const before = cached?.job.rev === expectedRev ? cached.job : undefined;
    const text = jobRecordText(job, before && cached?.text);
    const record = text.json;
    const listed = listedStatusOf(job);
    if (expectedRev === 0) {
      if (s.insertJob.run(...jobRow(job, record)).changes === 0) return undefined;
      if (job.parent) return text;
      if (job.attributes)
        for (const [name, value] of Object.entries(job.attributes))
          s.insertJobAttribute.run(name, value, job.createdAt, job.id);
      this.countChanges.add(job.workflow, undefined, listed);
      return text;
    }
    if (before && listedStatusOf(before) === listed && before.endedAt === job.endedAt)
      return s.updateJobRecord.run(job.rev, record, job.id, expectedRev).changes > 0 ? text : undefined;
    // The status it moves from: the cached revision's, else the row's (read before it changes).
    const from = job.parent
      ? undefined
      : before
        ? listedStatusOf(before)
        : s.listedStatusAt.get(job.id, expectedRev);
    if (s.updateJob.run(job.rev, listed, job.endedAt ?? null, record, job.id, expectedRev).changes === 0)
      return undefined;
    if (!job.parent) this.countChanges.add(job.workflow, from, listed);
    return text;
  }

  async listChildren(
    parentId: string,
    step: string,
    page: { fromIndex?: number; limit: number },
  ): Promise<ChildrenPage> {
    this.ready();
    const limit = Math.max(1, Math.trunc(page.limit));
    const rows = this.statements.listChildren.all(parentId, step, page.fromIndex ?? 0, limit + 1);
    const children = rows.slice(0, limit).map(([, record]) => jobFromJson(JSON.parse(record) as JobJson));
    const next = rows[limit];
    return next ? { children, nextIndex: next[0] } : { children };
  }

  async getFanCounts(parentId: string, step: string): Promise<FanCounts | undefined> {
    this.ready();
    const row = this.statements.getFanCounts.get(parentId, step);
    return row && fanCountsOf(row);
  }

  async setFanCounts(parentId: string, step: string, counts: FanCounts): Promise<void> {
    this.ready();
    this.outcome.run(() =>
      this.statements.setFanCounts.run(parentId, step, counts.total, counts.done, counts.failed),
    );
  }

  async getRunningCount(workflow: string): Promise<RunningCount> {
    this.ready();
    return readRunningCount(this.statements, workflow);
  }

  async getTree(root: string): Promise<TreeState> {
    this.ready();
    return readTree(this.statements, root);
  }

  async listQueued(workflow: string, limit: number): Promise<QueuedJob[]> {
    this.ready();
    return this.statements.listQueued.all(workflow, Math.max(1, Math.trunc(limit))).map(queuedJobOf);
  }

  async queryJobs(query: JobQuery): Promise<JobPage> {
    this.ready();
    const { sql, params, limit } = jobQuerySql(query);
    let statement = this.jobListings.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[], [number, string, string]>(sql).raw();
      this.jobListings.set(sql, statement);
    }
    const rows = statement.all(...params);
    const jobs = rows.slice(0, limit).map(([, , record]) => jobFromJson(JSON.parse(record) as JobJson));
    const last = rows[limit - 1];
    return rows.length > limit && last
      ? { jobs, cursor: encodeJobCursor({ createdAt: last[0], id: last[1] }) }
      : { jobs };
  }

  async countJobs(workflow: string): Promise<Record<ListedStatus, number>> {
    this.ready();
    const counts = zeroListedCounts();
    for (const [status, count] of this.statements.countJobs.all(workflow)) {
      if (isListedStatus(status)) counts[status] = count;
    }
    return counts;
  }

  async pendingOutbox(page: { limit: number; cursor?: string; createdBefore?: number }): Promise<OutboxPage> {
    this.ready();
    const limit = Math.max(1, Math.trunc(page.limit));
    const after = page.cursor ? Number(page.cursor) : 0;
    if (!Number.isSafeInteger(after)) throw new Error(`invalid outbox cursor "${page.cursor}"`);
    const rows =
      page.createdBefore === undefined
        ? this.statements.pendingOutbox.all(after, limit + 1)
        : this.statements.pendingOutboxCreatedBefore.all(after, page.createdBefore, limit + 1);
    let entries = rows.slice(0, limit).map(([, ...row]) => outboxEntry(row));
    if (this.unwrittenAcks.size) entries = entries.filter((entry) => !this.unwrittenAcks.has(entry.id));
    const last = rows[limit - 1];
    return rows.length > limit && last ? { entries, cursor: String(last[0]) } : { entries };
  }

  /**
   * Deferred: the deletes ride with the next transaction (or get one of their own a moment later),
   * so that acknowledging a batch of sent requests costs no WAL sync of its own. An acknowledgement
   * lost in a crash only sends its request again, which delivery at least once allows; until it is
   * written, `pendingOutbox` leaves the entry out.
   */
  async ackOutbox(ids: readonly string[], options: { urgent?: boolean } = {}): Promise<void> {
    this.assertOpen();
    if (!ids.length) return;
    const acked = [...ids];
    for (const id of acked) this.unwrittenAcks.add(id);
    const write = () => {
      for (const id of acked) this.statements.ackOutbox.run(id);
    };
    const written = () => {
      for (const id of acked) this.unwrittenAcks.delete(id);
    };
    if (options.urgent) await this.writes.add(write, written);
    else this.writes.defer(write, written);
  }

  async listTimers(page: { dueBy?: number; limit: number }): Promise<Timer[]> {
    this.ready();
    const limit = Math.max(1, Math.trunc(page.limit));
    const rows =
      page.dueBy === undefined
        ? this.statements.listTimers.all(limit)
        : this.statements.listTimersDueBy.all(page.dueBy, limit);
    return rows.map(timerOf);
  }

  /**
   * In short transactions with the event loop free in between, so that a large backlog never holds
   * the write lock (or the process) for long. A job goes after all its descendants, the top-level job
   * last: whatever an interruption leaves is still a whole tree under a finished job, found next time.
   */
  async deleteFinishedJobs(endedBefore: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      this.ready();
      const roots = this.statements.finishedRoots.all(endedBefore, RETENTION_ROOTS_PER_ROUND);
      const ids = roots.flatMap((root) => this.statements.tree.all(root).reverse());
      for (let start = 0; start < ids.length; start += RETENTION_JOBS_PER_TRANSACTION) {
        if (start > 0) await yieldToEventLoop();
        this.ready();
        deleted += this.deleteJobs(ids.slice(start, start + RETENTION_JOBS_PER_TRANSACTION));
      }
      if (roots.length < RETENTION_ROOTS_PER_ROUND) return deleted;
      await yieldToEventLoop();
    }
  }

  /** A job's row with its timers, outbox entries and fan-out counters; 1 when the job was there. */
  private deleteJobRows(id: string): number {
    const s = this.statements;
    s.deleteJobTimers.run(id);
    s.deleteJobOutbox.run(id);
    s.deleteJobFanCounts.run(id);
    s.deleteTreeSize.run(id);
    this.cache.forget(id);
    return s.deleteJob.run(id).changes;
  }

  /**
   * The crash journal's writes go to the WAL without a sync of their own (`synchronous = NORMAL`):
   * they must outlive the process, which the OS's cache does, not the machine; the next commit's
   * sync takes them along. A journal that synced would cost every reply handled alone a sync.
   */
  async holdReply(key: string, holder: string, now: number, alone: boolean): Promise<ReplyDeaths> {
    this.ready();
    const s = this.statements;
    return this.unsynced(() => {
      s.forgetRepliesInHand.run(now - REPLY_NOTE_LIFETIME_MS);
      const row = s.replyInHand.get(key);
      const previous = row && {
        holder: row.holder,
        heldAlone: row.held_alone === 1,
        alone: row.died_alone,
        amongOthers: row.died_among_others === 1,
        since: row.since,
      };
      const note = heldReplyNote(previous, holder, now, alone);
      s.holdReply.run(key, holder, note.heldAlone ? 1 : 0, note.alone, note.amongOthers ? 1 : 0, now);
      return { alone: note.alone, amongOthers: note.amongOthers };
    });
  }

  async releaseReply(key: string, holder: string, keep = false): Promise<void> {
    this.ready();
    const statement = keep ? this.statements.letGoOfReply : this.statements.forgetReply;
    this.unsynced(() => statement.run(key, holder));
  }

  /** One transaction committed without a WAL sync (see `holdReply`). */
  private unsynced<T>(write: () => T): T {
    const transaction = this.db.transaction(write);
    if (this.synchronous === 'NORMAL') return this.outcome.run(() => transaction.immediate());
    this.db.pragma('synchronous = NORMAL');
    try {
      return this.outcome.run(() => transaction.immediate());
    } finally {
      this.db.pragma('synchronous = FULL');
    }
  }

  /**
   * Reads, and while the last write failed on storage, probes with a one-page write (the schema
   * version written again): the store stays unhealthy until a write gets through.
   */
  async ping(): Promise<void> {
    this.ready();
    this.statements.ping.get();
    if (!this.outcome.lastFailure) return;
    const version = this.db.pragma('user_version', { simple: true }) as number;
    this.outcome.run(() => this.db.pragma(`user_version = ${version}`));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.writes.flush();
    this.closed = true;
    this.db.close();
  }

  /**
   * Before any other operation. Reads do not wait for writes queued in this turn: those writes'
   * callers have not been told they are stored yet, so a read that misses them is a read from just
   * before them (a conditional write built on it loses its race and is retried). Flushing here
   * would cost one transaction, and one sync, per read.
   */
  private ready(): void {
    this.assertOpen();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`the SQLite store ${this.path} is closed`);
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
