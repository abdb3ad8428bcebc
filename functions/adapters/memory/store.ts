import {
  AUDIT_RETENTION_MS,
  type AuditEntry,
  type AuditPage,
  type ChildrenPage,
  type Commit,
  type CommitResult,
  changeAllowed,
  countAfter,
  DELIVERY_RETENTION_MS,
  type Delivery,
  type DeliveryPage,
  type DeliveryQuery,
  definitionText,
  deliveryPageKey,
  type EveryField,
  type FanCounts,
  type HeldReplyNote,
  heldByOtherJobs,
  heldReplyNote,
  InvalidCursorError,
  isFinished,
  type JobPage,
  type JobQuery,
  type JobRecord,
  jobFromJson,
  type ListedStatus,
  listedStatusOf,
  matchesJobQuery,
  type NamespaceSettings,
  type OutboxEntry,
  type OutboxPage,
  type QueuedJob,
  type ReplyDeaths,
  type RunningCount,
  type Store,
  type StoredToken,
  type StoredWorkflow,
  type Timer,
  type TreeState,
  timerId,
  treeChangeAllowed,
  versionToSave,
  type WorkflowDefinition,
  type WorkflowSummary,
  zeroListedCounts,
  zeroRunningCount,
} from '../../../engine/index.js';

const copy = <T>(value: T): T => structuredClone(value);
/** The counts of a fan-out's counters, which keep the whole `FanInit` they were created from. */
const countsOf = ({ total, done, failed }: FanCounts): FanCounts =>
  ({ total, done, failed }) satisfies EveryField<FanCounts>;
const copyJob = (job: JobRecord): JobRecord => jobFromJson(copy({ ...job, steps: job.steps.toArray() }));
const childKey = (parentId: string, step: string): string => `${parentId}\u0000${step}`;

/** A `Store` in memory, for tests and `--db :memory:`-like try-outs; records are copied in and out. */
export class MemoryStore implements Store {
  private readonly workflows = new Map<string, StoredWorkflow[]>();
  private readonly jobs = new Map<string, JobRecord>();
  private readonly children = new Map<string, string[]>();
  private readonly counts = new Map<string, FanCounts>();
  private readonly outbox = new Map<string, { seq: number; entry: OutboxEntry }>();
  private outboxSeq = 0;
  private readonly timers = new Map<string, Timer>();
  private readonly tokens = new Map<string, StoredToken>();
  /** Oldest first. */
  private audit: AuditEntry[] = [];
  private readonly namespaceSettings = new Map<string, NamespaceSettings>();
  private readonly keys = new Map<string, string>();
  /** By workflow: its `maxRunning` counters, and its queue (job ids by place). */
  private readonly runningCounts = new Map<string, RunningCount>();
  private readonly queues = new Map<string, Map<number, string>>();
  /** By tree root: the jobs counted under it (engine/job/tree-quota.ts). */
  private readonly treeSizes = new Map<string, number>();
  private readonly deliveries = new Map<string, Delivery>();
  /** The crash journal: replies in hand, by key. */
  private readonly repliesInHand = new Map<string, HeldReplyNote>();
  private closed = false;

  async saveWorkflow(
    definition: WorkflowDefinition,
    now: number,
  ): Promise<{ version: number; created: boolean }> {
    const versions = this.workflows.get(definition.name) ?? [];
    const latest = versions.at(-1);
    const { version, created } = versionToSave(
      latest && { version: latest.version, text: definitionText(latest.definition) },
      definitionText(definition),
    );
    if (!created && latest) {
      latest.enabled = true;
      return { version, created };
    }
    for (const older of versions) older.enabled = true;
    versions.push({
      name: definition.name,
      version,
      definition: copy(definition),
      createdAt: now,
      enabled: true,
    });
    this.workflows.set(definition.name, versions);
    return { version, created: true };
  }

  async getWorkflow(name: string, version?: number): Promise<StoredWorkflow | undefined> {
    const versions = this.workflows.get(name);
    const found = version === undefined ? versions?.at(-1) : versions?.find((v) => v.version === version);
    return found && { ...copy(found), enabled: versions?.at(-1)?.enabled ?? true };
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    return [...this.workflows.values()]
      .map((versions) => {
        const latest = versions.at(-1) as StoredWorkflow;
        const summary: WorkflowSummary = {
          name: latest.name,
          latestVersion: latest.version,
          enabled: latest.enabled,
          vhosts: latest.definition.vhosts ?? [],
          versions: versions.map((v) => ({ version: v.version, createdAt: v.createdAt })),
        };
        if (latest.definition.description) summary.description = latest.definition.description;
        return summary;
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async setWorkflowEnabled(name: string, enabled: boolean): Promise<boolean> {
    const versions = this.workflows.get(name);
    if (!versions) return false;
    for (const version of versions) version.enabled = enabled;
    return true;
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const job = this.jobs.get(id);
    return job && copyJob(job);
  }

  async getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    const found = new Map<string, JobRecord>();
    for (const id of ids) {
      const job = this.jobs.get(id);
      if (job) found.set(id, copyJob(job));
    }
    return found;
  }

  async commit(commits: readonly Commit[]): Promise<CommitResult[]> {
    this.assertOpen();
    return commits.map((commit) => this.applyCommit(commit));
  }

  private applyCommit(commit: Commit): CommitResult {
    const current = this.jobs.get(commit.job.id);
    if (commit.expectedRev === 0 ? current !== undefined : current?.rev !== commit.expectedRev) {
      return { ok: false, conflict: true };
    }
    const limit = commit.limit;
    const count = limit && (this.runningCounts.get(limit.workflow) ?? zeroRunningCount());
    if (limit && count && !changeAllowed(count, limit)) return { ok: false, conflict: true };
    const tree = commit.tree;
    const treeState = tree && this.treeOf(tree.root);
    if (tree && treeState && !treeChangeAllowed(treeState, tree, commit.job.id))
      return { ok: false, conflict: true };
    const taken = heldByOtherJobs(commit.creates, (id) => this.jobs.get(id));
    if (taken.length) return { ok: false, conflict: false, taken };
    if (limit && count) {
      this.runningCounts.set(limit.workflow, countAfter(count, limit));
      const queue = this.queues.get(limit.workflow) ?? new Map<number, string>();
      if (limit.op === 'enqueue') queue.set(limit.seq, limit.jobId);
      else if (limit.op === 'promote' || limit.op === 'dequeue') queue.delete(limit.seq);
      this.queues.set(limit.workflow, queue);
    }
    if (tree?.add && treeState) this.treeSizes.set(tree.root, treeState.size + tree.add);
    this.putJob(commit.job);
    for (const child of commit.creates) if (!this.jobs.has(child.id)) this.putJob(child);
    if (commit.dropUnsent) {
      for (const [id, { entry }] of this.outbox) {
        if (entry.kind === 'request' && entry.jobId === commit.job.id) this.outbox.delete(id);
      }
    }
    for (const entry of commit.outbox)
      this.outbox.set(entry.id, { seq: ++this.outboxSeq, entry: copy(entry) });
    for (const change of commit.timers) {
      if (change.op === 'set') this.timers.set(timerId(change.timer), { ...change.timer });
      else this.timers.delete(timerId(change.key));
    }
    for (const init of commit.fanInits) this.counts.set(childKey(init.parentId, init.step), { ...init });
    if (!commit.childOutcome) return { ok: true };
    const { parentId, step, status } = commit.childOutcome;
    const counts = this.counts.get(childKey(parentId, step));
    if (!counts) return { ok: true };
    if (status === 'completed') counts.done++;
    else counts.failed++;
    return { ok: true, fanCounts: countsOf(counts) };
  }

  private putJob(job: JobRecord): void {
    const isNew = !this.jobs.has(job.id);
    this.jobs.set(job.id, copyJob(job));
    if (isNew && job.parent) {
      const key = childKey(job.parent.id, job.parent.step);
      const list = this.children.get(key) ?? [];
      list[job.parent.index] = job.id;
      this.children.set(key, list);
    }
  }

  async listChildren(
    parentId: string,
    step: string,
    page: { fromIndex?: number; limit: number },
  ): Promise<ChildrenPage> {
    const list = this.children.get(childKey(parentId, step)) ?? [];
    const children: JobRecord[] = [];
    let index = page.fromIndex ?? 0;
    for (; index < list.length && children.length < page.limit; index++) {
      const id = list[index];
      const job = id === undefined ? undefined : this.jobs.get(id);
      if (job) children.push(copyJob(job));
    }
    return index < list.length ? { children, nextIndex: index } : { children };
  }

  async getFanCounts(parentId: string, step: string): Promise<FanCounts | undefined> {
    const counts = this.counts.get(childKey(parentId, step));
    return counts && countsOf(counts);
  }

  /** A retried fan-out counted anew: what else its counters keep of their `FanInit` stays. */
  async setFanCounts(parentId: string, step: string, counts: FanCounts): Promise<void> {
    const key = childKey(parentId, step);
    this.counts.set(key, { ...this.counts.get(key), ...countsOf(counts) });
  }

  async getRunningCount(workflow: string): Promise<RunningCount> {
    return { ...(this.runningCounts.get(workflow) ?? zeroRunningCount()) };
  }

  async getTree(root: string): Promise<TreeState> {
    return this.treeOf(root);
  }

  private treeOf(root: string): TreeState {
    return { size: this.treeSizes.get(root) ?? 0, rootStatus: this.jobs.get(root)?.status };
  }

  async listQueued(workflow: string, limit: number): Promise<QueuedJob[]> {
    return [...(this.queues.get(workflow) ?? new Map<number, string>())]
      .sort(([a], [b]) => a - b)
      .slice(0, limit)
      .map(([seq, jobId]) => ({ jobId, seq }));
  }

  async queryJobs(query: JobQuery): Promise<JobPage> {
    const limit = Math.max(1, Math.trunc(query.limit ?? 100));
    // Keyset paging, as the other stores: a page continues after the last (createdAt, id) handed out,
    // so jobs that change status between pages (a batch cancel) move no other job across pages.
    const after = query.cursor === undefined ? undefined : memoryCursor(query.cursor);
    const matching = [...this.jobs.values()]
      .filter(
        (job) =>
          matchesJobQuery(job, query) &&
          (after === undefined ||
            job.createdAt < after[0] ||
            (job.createdAt === after[0] && job.id < after[1])),
      )
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    return matching.length > limit && last
      ? {
          jobs: page.map(copyJob),
          cursor: Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url'),
        }
      : { jobs: page.map(copyJob) };
  }

  async countJobs(workflow: string): Promise<Record<ListedStatus, number>> {
    const counts = zeroListedCounts();
    for (const job of this.jobs.values()) {
      if (job.workflow === workflow && job.parent === null) counts[listedStatusOf(job)]++;
    }
    return counts;
  }

  async pendingOutbox(page: { limit: number; cursor?: string; createdBefore?: number }): Promise<OutboxPage> {
    const after = page.cursor ? Number(page.cursor) : 0;
    const matching = [...this.outbox.values()].filter(
      ({ seq, entry }) =>
        seq > after && (page.createdBefore === undefined || entry.createdAt < page.createdBefore),
    );
    const slice = matching.slice(0, page.limit);
    const last = slice.at(-1);
    const entries = slice.map(({ entry }) => copy(entry));
    return matching.length > page.limit && last ? { entries, cursor: String(last.seq) } : { entries };
  }

  async ackOutbox(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.outbox.delete(id);
  }

  async listTimers(page: { dueBy?: number; limit: number }): Promise<Timer[]> {
    return [...this.timers.values()]
      .filter((timer) => page.dueBy === undefined || timer.at <= page.dueBy)
      .sort((a, b) => a.at - b.at)
      .slice(0, page.limit)
      .map((timer) => ({ ...timer }));
  }

  async deleteFinishedJobs(endedBefore: number): Promise<number> {
    let deleted = 0;
    for (const job of [...this.jobs.values()]) {
      if (job.parent === null && isFinished(job.status) && (job.endedAt ?? 0) < endedBefore) {
        for (const [id, other] of this.jobs) {
          if (other.root === job.id) {
            this.jobs.delete(id);
            deleted++;
          }
        }
        this.treeSizes.delete(job.id);
      }
    }
    for (const [key, list] of this.children)
      if (!this.jobs.has(list.find(Boolean) ?? '')) this.children.delete(key);
    return deleted;
  }

  async saveToken(token: StoredToken): Promise<boolean> {
    if (this.tokens.has(token.id)) return false;
    this.tokens.set(token.id, { ...token });
    return true;
  }

  async getToken(id: string): Promise<StoredToken | undefined> {
    const token = this.tokens.get(id);
    return token && { ...token };
  }

  async listTokens(): Promise<StoredToken[]> {
    return [...this.tokens.values()].sort((a, b) => a.createdAt - b.createdAt).map((token) => ({ ...token }));
  }

  async recordAudit(entry: AuditEntry): Promise<void> {
    const since = entry.at - AUDIT_RETENTION_MS;
    this.audit = this.audit.filter((kept) => kept.at >= since && kept.id !== entry.id);
    this.audit.push(structuredClone(entry));
    this.audit.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage> {
    const { cursor } = query;
    const found = this.audit
      .filter((entry) => entry.namespace === query.namespace && (cursor === undefined || entry.id < cursor))
      .reverse();
    const entries = found.slice(0, query.limit).map((entry) => structuredClone(entry));
    const last = entries.at(-1);
    return found.length > query.limit && last ? { entries, cursor: last.id } : { entries };
  }

  async addDeliveries(deliveries: readonly Delivery[]): Promise<void> {
    if (!deliveries.length) return;
    const newest = Math.max(...deliveries.map((delivery) => delivery.createdAt));
    for (const [id, kept] of this.deliveries) {
      if (kept.state !== 'pending' && kept.updatedAt < newest - DELIVERY_RETENTION_MS)
        this.deliveries.delete(id);
    }
    for (const delivery of deliveries) {
      if (!this.deliveries.has(delivery.id)) this.deliveries.set(delivery.id, copy(delivery));
    }
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    return [...this.deliveries.values()]
      .filter((delivery) => delivery.state === 'pending' && delivery.nextAttemptAt <= now)
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
      .slice(0, limit)
      .map(copy);
  }

  async updateDelivery(delivery: Delivery): Promise<boolean> {
    const stored = this.deliveries.get(delivery.id);
    if (!stored || stored.rev !== delivery.rev - 1) return false;
    this.deliveries.set(delivery.id, copy(delivery));
    return true;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const delivery = this.deliveries.get(id);
    return delivery && copy(delivery);
  }

  async jobDeliveries(jobId: string): Promise<Delivery[]> {
    return [...this.deliveries.values()]
      .filter((delivery) => delivery.jobId === jobId)
      .sort((a, b) => (deliveryPageKey(a) < deliveryPageKey(b) ? -1 : 1))
      .map(copy);
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    const limit = query.limit ?? 100;
    const { cursor, namespace } = query;
    const found = [...this.deliveries.values()]
      .filter(
        (delivery) =>
          delivery.state === query.state &&
          delivery.namespace === namespace &&
          (cursor === undefined || deliveryPageKey(delivery) < cursor),
      )
      .sort((a, b) => (deliveryPageKey(a) < deliveryPageKey(b) ? 1 : -1));
    const deliveries = found.slice(0, limit).map(copy);
    const last = deliveries.at(-1);
    return found.length > limit && last ? { deliveries, cursor: deliveryPageKey(last) } : { deliveries };
  }

  async deleteToken(id: string): Promise<boolean> {
    return this.tokens.delete(id);
  }

  async getNamespaceSettings(namespace: string): Promise<NamespaceSettings | undefined> {
    const settings = this.namespaceSettings.get(namespace);
    return settings && copy(settings);
  }

  async listNamespaceSettings(): Promise<NamespaceSettings[]> {
    return [...this.namespaceSettings.values()]
      .sort((a, b) => (a.namespace < b.namespace ? -1 : 1))
      .map((settings) => copy(settings));
  }

  async saveNamespaceSettings(settings: NamespaceSettings): Promise<void> {
    this.namespaceSettings.set(settings.namespace, copy(settings));
  }

  async managerKey(name: string, candidate: string): Promise<string> {
    const stored = this.keys.get(name);
    if (stored !== undefined) return stored;
    this.keys.set(name, candidate);
    return candidate;
  }

  async holdReply(key: string, holder: string, now: number, alone: boolean): Promise<ReplyDeaths> {
    const note = heldReplyNote(this.repliesInHand.get(key), holder, now, alone);
    this.repliesInHand.set(key, note);
    return { alone: note.alone, amongOthers: note.amongOthers };
  }

  async releaseReply(key: string, holder: string, keep = false): Promise<void> {
    const note = this.repliesInHand.get(key);
    if (note?.holder !== holder) return;
    if (keep) this.repliesInHand.set(key, { ...note, holder: '' });
    else this.repliesInHand.delete(key);
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }
}

function memoryCursor(text: string): [number, string] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (!Array.isArray(decoded) || typeof decoded[0] !== 'number' || typeof decoded[1] !== 'string') {
    throw new InvalidCursorError(text);
  }
  return [decoded[0], decoded[1]];
}
