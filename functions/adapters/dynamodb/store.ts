import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type {
  AuditEntry,
  AuditPage,
  ChildrenPage,
  Commit,
  CommitResult,
  Delivery,
  DeliveryPage,
  DeliveryQuery,
  FanCounts,
  JobPage,
  JobQuery,
  JobRecord,
  ListedStatus,
  NamespaceSettings,
  OutboxPage,
  QueuedJob,
  ReplyDeaths,
  RunningCount,
  Store,
  StoredToken,
  StoredWorkflow,
  Timer,
  TreeState,
  WorkflowDefinition,
  WorkflowSummary,
} from '../../../engine/index.js';
import { DynamoDbAuditLog } from './audit-log.js';
import { applyBatch, applyCommit, type CommitDeps } from './commit.js';
import { DynamoDbDeliveries } from './deliveries.js';
import { defaultCounterShards, FanCounters } from './fan-counters.js';
import { isFanInId, watchPartition, watchSource } from './fan-watch.js';
import { ackInline, InlineRequests } from './inline-outbox.js';
import { keys, SHARDS } from './items.js';
import { finishedCountsChange, readCounts } from './job-counts.js';
import { HeadCache } from './job-items.js';
import { queryJobs } from './job-query.js';
import { JobReader } from './job-reader.js';
import { DynamoDbNamespaceSettings } from './namespace-settings.js';
import { listTimers, pendingOutbox } from './outbox.js';
import { deleteSpentGroups, GroupRequests, groupPartition, groupSource } from './outbox-groups.js';
import { PendingWrites } from './pending.js';
import { DynamoDbRepliesInHand } from './replies-in-hand.js';
import { deleteFinishedJobs } from './retention.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { listQueued, readRunningCount } from './running-limits.js';
import { logSent, SentRequests } from './sent-log.js';
import { DynamoDbTable, forEachLimit } from './table.js';
import { DynamoDbTokens } from './tokens.js';
import { keepLongTreesAlive } from './tree-horizons.js';
import { readTree } from './tree-sizes.js';
import { legacyCutoff, stampEndedTrees } from './ttl-stamps.js';
import { DynamoDbWorkflows, registeredWorkflows } from './workflows.js';
import { advanceWatermark, readWatermark, YoungHeads, youngSources } from './young-heads.js';

// The Store port on DynamoDB. Its design (items, outbox, indexes, races): README.md in this folder.

export interface DynamoDbStoreOptions {
  /** Created once per container by the caller, who also destroys it. */
  client: DynamoDBClient;
  tableName: string;
  /**
   * TTL: a finished top-level job's items (its whole tree) expire this long after it ended
   * (ttl-stamps.ts), and `deleteFinishedJobs` only stamps trees and sweeps what older code left.
   * Unset: no TTL, and `deleteFinishedJobs` deletes every finished tree.
   */
  retentionSeconds?: number;
  /** What one `deleteFinishedJobs` run may do. @default 20,000 expiry stamps, 1,000 swept roots */
  sweepLimits?: { stampWrites: number; sweptRoots: number };
  /** The time `deleteFinishedJobs` runs at. @default Date.now */
  clock?: () => number;
  /** Counter shards of a fan-out of `total` children (1 to 32). @default one per 100 children */
  counterShards?: (total: number) => number;
  /** @default 10 attempts, waits from 25 ms doubling to at most 5 s, full jitter */
  retry?: RetryPolicy;
}

/** Commits of one call written at once (a cancel of a fan-out's children passes a thousand). */
const PARALLEL_COMMITS = 32;

const newCommitToken = (): string => randomBytes(9).toString('base64url');

export class DynamoDbStore implements Store {
  private readonly table: DynamoDbTable;
  private readonly pending: PendingWrites;
  private readonly heads = new HeadCache();
  private readonly reader: JobReader;
  private readonly fans: FanCounters;
  private readonly workflows: DynamoDbWorkflows;
  private readonly tokens: DynamoDbTokens;
  private readonly audit: DynamoDbAuditLog;
  private readonly deliveries: DynamoDbDeliveries;
  private readonly namespaces: DynamoDbNamespaceSettings;
  private readonly repliesInHand: DynamoDbRepliesInHand;
  private readonly commitDeps: CommitDeps;
  /** Which job's head holds each inline request this store committed or recovered. */
  private readonly inline = new InlineRequests();
  /** Which group item holds each request for a created child this store committed or recovered. */
  private readonly groups = new GroupRequests();
  private closed = false;
  private readonly retentionSeconds: number | undefined;
  private readonly sweepLimits: { stampWrites: number; sweptRoots: number };
  private readonly clock: () => number;

  constructor(options: DynamoDbStoreOptions) {
    this.retentionSeconds = options.retentionSeconds;
    this.sweepLimits = options.sweepLimits ?? { stampWrites: 20_000, sweptRoots: 1_000 };
    this.clock = options.clock ?? Date.now;
    this.table = new DynamoDbTable(options.client, options.tableName, options.retry ?? DEFAULT_RETRY_POLICY);
    this.pending = new PendingWrites(this.table);
    this.reader = new JobReader(this.table, this.pending, this.heads);
    this.fans = new FanCounters(this.table, this.pending, options.counterShards ?? defaultCounterShards);
    this.workflows = new DynamoDbWorkflows(this.table);
    this.tokens = new DynamoDbTokens(this.table);
    this.audit = new DynamoDbAuditLog(this.table);
    this.deliveries = new DynamoDbDeliveries(this.table);
    this.namespaces = new DynamoDbNamespaceSettings(this.table);
    this.repliesInHand = new DynamoDbRepliesInHand(this.table);
    this.commitDeps = {
      table: this.table,
      pending: this.pending,
      fans: this.fans,
      heads: this.heads,
      retentionSeconds: options.retentionSeconds,
      newToken: newCommitToken,
      readJobs: (ids) => this.reader.getJobs(ids),
      onInline: (jobId, entries) => this.inline.note(jobId, entries),
      onGroup: (key, ids) => this.groups.note(key, ids),
      isRegistered: (workflow) => this.workflows.isRegistered(workflow),
    };
  }

  saveWorkflow(definition: WorkflowDefinition, now: number): Promise<{ version: number; created: boolean }> {
    return this.workflows.save(definition, now);
  }

  getWorkflow(name: string, version?: number): Promise<StoredWorkflow | undefined> {
    return this.workflows.get(name, version);
  }

  listWorkflows(): Promise<WorkflowSummary[]> {
    return this.workflows.list();
  }

  setWorkflowEnabled(name: string, enabled: boolean): Promise<boolean> {
    return this.workflows.setEnabled(name, enabled);
  }

  saveToken(token: StoredToken): Promise<boolean> {
    return this.tokens.saveToken(token);
  }

  getToken(id: string): Promise<StoredToken | undefined> {
    return this.tokens.getToken(id);
  }

  holdReply(key: string, holder: string, now: number, alone: boolean): Promise<ReplyDeaths> {
    return this.repliesInHand.holdReply(key, holder, now, alone);
  }

  releaseReply(key: string, holder: string, keep?: boolean): Promise<void> {
    return this.repliesInHand.releaseReply(key, holder, keep);
  }

  listTokens(): Promise<StoredToken[]> {
    return this.tokens.listTokens();
  }

  deleteToken(id: string): Promise<boolean> {
    return this.tokens.deleteToken(id);
  }

  addDeliveries(deliveries: readonly Delivery[]): Promise<void> {
    return this.deliveries.addDeliveries(deliveries);
  }

  dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    return this.deliveries.dueDeliveries(now, limit);
  }

  updateDelivery(delivery: Delivery): Promise<boolean> {
    return this.deliveries.updateDelivery(delivery);
  }

  getDelivery(id: string): Promise<Delivery | undefined> {
    return this.deliveries.getDelivery(id);
  }

  jobDeliveries(jobId: string): Promise<Delivery[]> {
    return this.deliveries.jobDeliveries(jobId);
  }

  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    return this.deliveries.listDeliveries(query);
  }

  recordAudit(entry: AuditEntry): Promise<void> {
    return this.audit.recordAudit(entry);
  }

  listAudit(query: { namespace: string; limit: number; cursor?: string }): Promise<AuditPage> {
    return this.audit.listAudit(query);
  }

  getNamespaceSettings(namespace: string): Promise<NamespaceSettings | undefined> {
    return this.namespaces.getNamespaceSettings(namespace);
  }

  listNamespaceSettings(): Promise<NamespaceSettings[]> {
    return this.namespaces.listNamespaceSettings();
  }

  saveNamespaceSettings(settings: NamespaceSettings): Promise<void> {
    return this.namespaces.saveNamespaceSettings(settings);
  }

  managerKey(name: string, candidate: string): Promise<string> {
    return this.namespaces.managerKey(name, candidate);
  }

  getJob(id: string): Promise<JobRecord | undefined> {
    return this.reader.getJob(id);
  }

  getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    return this.reader.getJobs(ids);
  }

  /** Commits of different jobs run at once; commits of the same job one after the other, in order. */
  async commit(commits: readonly Commit[]): Promise<CommitResult[]> {
    this.assertOpen();
    const results: CommitResult[] = new Array(commits.length);
    const byJob = new Map<string, number[]>();
    commits.forEach((commit, n) => {
      const list = byJob.get(commit.job.id);
      if (list) list.push(n);
      else byJob.set(commit.job.id, [n]);
    });
    // Children finishing in this call with a sibling of the same fan-out step, and top-level jobs
    // changing status with another of the same workflow (each job once): together, one counter
    // update for all (applyBatch).
    const finishing = new Map<string, number[]>();
    for (const [n, commit] of commits.entries()) {
      const outcome = commit.childOutcome;
      const { job } = commit;
      if (byJob.get(job.id)?.length !== 1) continue;
      let key: string;
      if (outcome) key = `FAN\u0000${outcome.parentId}\u0000${outcome.step}`;
      else if (job.parent === null && commit.expectedRev > 0) {
        const before = this.heads.get(job.id, commit.expectedRev);
        if (!before || !finishedCountsChange(before.status, job.status)) continue;
        key = `CNT\u0000${job.workflow}`;
      } else continue;
      const list = finishing.get(key);
      if (list) list.push(n);
      else finishing.set(key, [n]);
    }
    const together = [...finishing.values()].filter((list) => list.length > 1).flat();
    const batch = together.length
      ? applyBatch(
          this.commitDeps,
          together.map((n) => commits[n] as Commit),
        ).then((out) => {
          together.forEach((n, k) => {
            results[n] = out[k] as CommitResult;
          });
        })
      : Promise.resolve();
    const batched = new Set(together);
    const single = [...byJob.values()].filter((positions) => !batched.has(positions[0] as number));
    await Promise.all([
      batch,
      forEachLimit(single, PARALLEL_COMMITS, async (positions) => {
        for (const n of positions) results[n] = await applyCommit(this.commitDeps, commits[n] as Commit);
      }),
    ]);
    return results;
  }

  listChildren(
    parentId: string,
    step: string,
    page: { fromIndex?: number; limit: number },
  ): Promise<ChildrenPage> {
    return this.reader.listChildren(parentId, step, page);
  }

  getFanCounts(parentId: string, step: string): Promise<FanCounts | undefined> {
    return this.fans.read(parentId, step);
  }

  getRunningCount(workflow: string): Promise<RunningCount> {
    return readRunningCount(this.table, workflow);
  }

  listQueued(workflow: string, limit: number): Promise<QueuedJob[]> {
    return listQueued(this.table, workflow, limit);
  }

  getTree(root: string): Promise<TreeState> {
    return readTree(this.table, root);
  }

  setFanCounts(parentId: string, step: string, counts: FanCounts): Promise<void> {
    return this.fans.set(parentId, step, counts);
  }

  queryJobs(query: JobQuery): Promise<JobPage> {
    return queryJobs(this.table, this.reader, query);
  }

  countJobs(workflow: string): Promise<Record<ListedStatus, number>> {
    return readCounts(this.table, workflow);
  }

  /**
   * A whole pass with `createdBefore` (its last page) moves the young heads' watermark on
   * (young-heads.ts).
   */
  async pendingOutbox(page: { limit: number; cursor?: string; createdBefore?: number }): Promise<OutboxPage> {
    const readJobs = (ids: readonly string[]) => this.reader.getJobs(ids);
    const groupDeps = {
      table: this.table,
      pending: this.pending,
      readJobs,
      onGroup: (key: Parameters<GroupRequests['note']>[0], ids: readonly string[]) =>
        this.groups.note(key, ids),
    };
    const watchDeps = { table: this.table, pending: this.pending, fans: this.fans, readJobs };
    const limit = Math.max(1, page.limit);
    const inline = {
      sent: new SentRequests(this.table, this.heads),
      onInline: (jobId: string, shorts: readonly string[]) =>
        this.inline.note(
          jobId,
          shorts.map((short) => ({ short })),
        ),
    };
    const [watermark, workflows] = await Promise.all([
      readWatermark(this.table),
      registeredWorkflows(this.table),
    ]);
    const young = new YoungHeads(this.table);
    const result = await pendingOutbox(this.table, this.pending, page, inline, (cursor) => [
      ...Array.from({ length: SHARDS.outbox }, (_, shard) =>
        groupSource(groupDeps, groupPartition(shard), limit, cursor, page.createdBefore),
      ),
      ...Array.from({ length: SHARDS.outbox }, (_, shard) =>
        watchSource(watchDeps, watchPartition(shard), cursor, page.createdBefore),
      ),
      ...youngSources(
        this.table,
        workflows,
        watermark,
        limit,
        { ...inline, cursor, createdBefore: page.createdBefore },
        young,
      ),
    ]);
    await Promise.all([young.promote(), inline.sent.removeFromHeads()]);
    if (result.cursor === undefined && page.createdBefore !== undefined)
      await advanceWatermark(this.table, page.createdBefore);
    return result;
  }

  /**
   * Outbox items and spent groups are deleted; inline requests this store committed are logged as
   * sent, in one item (sent-log.ts); other inline entries are removed from their heads.
   */
  async ackOutbox(ids: readonly string[]): Promise<void> {
    const grouped = this.groups.take(ids.filter((id) => !isFanInId(id)));
    const { logged, byJob, items } = this.inline.take(grouped.rest);
    await Promise.all([
      this.table.batchWrite([
        ...items.map((id) => ({ delete: keys.outbox(id) })),
        ...grouped.done.map((key) => ({ delete: key })),
      ]),
      logSent(this.table, logged),
      forEachLimit([...byJob], PARALLEL_COMMITS, async ([jobId, done]) => {
        await ackInline(this.table, jobId, done);
        this.heads.forgetInline(jobId, done);
      }),
    ]);
  }

  listTimers(page: { dueBy?: number; limit: number }): Promise<Timer[]> {
    return listTimers(this.table, this.pending, page);
  }

  /**
   * With a retention (TTL), raises the horizon of trees that run long (tree-horizons.ts) and stamps
   * the trees of jobs that ended (ttl-stamps.ts), then deletes the
   * trees that code older than TTL retention finished (no `tt`); without one, deletes every tree
   * that ended before `endedBefore`. Each part is bounded per run (`sweepLimits`). Also deletes the
   * groups of requests left for the deleted children (outbox-groups.ts).
   */
  async deleteFinishedJobs(endedBefore: number): Promise<number> {
    const now = this.clock();
    if (this.retentionSeconds !== undefined) {
      const budget = { writes: this.sweepLimits.stampWrites };
      await keepLongTreesAlive(this.table, now, this.retentionSeconds, budget);
      await stampEndedTrees(this.table, now, budget);
    }
    const deleted = await deleteFinishedJobs(this.table, endedBefore, {
      maxRoots: this.sweepLimits.sweptRoots,
      createdBefore: this.retentionSeconds !== undefined ? await legacyCutoff(this.table, now) : undefined,
    });
    await deleteSpentGroups({
      table: this.table,
      pending: this.pending,
      readJobs: (ids) => this.reader.getJobs(ids),
    });
    return deleted;
  }

  /** One read of a fixed key: half a read unit, and it proves the table, the network and the credentials. */
  async ping(): Promise<void> {
    this.assertOpen();
    await this.table.get(keys.ping(), false);
  }

  /** The client belongs to the caller: closing only stops this store from writing. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }
}
