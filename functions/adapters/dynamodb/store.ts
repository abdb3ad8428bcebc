import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { WorkflowDefinition } from '../../../engine/definition/types.js';
import type { FanCounts, JobRecord, JobStatus, Timer } from '../../../engine/job/types.js';
import type {
  ChildrenPage,
  Commit,
  CommitResult,
  JobPage,
  JobQuery,
  OutboxPage,
  Store,
  StoredWorkflow,
  WorkflowSummary,
} from '../../../engine/ports/store.js';
import { applyBatch, applyCommit, type CommitDeps } from './commit.js';
import { defaultCounterShards, FanCounters } from './fan-counters.js';
import { isFanInId, watchPartition, watchSource } from './fan-watch.js';
import { ackInline, InlineRequests } from './inline-outbox.js';
import { keys, SHARDS } from './items.js';
import { finishedCountsChange, readCounts } from './job-counts.js';
import { HeadCache } from './job-items.js';
import { queryJobs } from './job-query.js';
import { JobReader } from './job-reader.js';
import { listTimers, pendingOutbox } from './outbox.js';
import { deleteSpentGroups, GroupRequests, groupPartition, groupSource } from './outbox-groups.js';
import { PendingWrites } from './pending.js';
import { deleteFinishedJobs } from './retention.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { logSent, SentRequests } from './sent-log.js';
import { DynamoDbTable, forEachLimit } from './table.js';
import { DynamoDbWorkflows, registeredWorkflows } from './workflows.js';
import { advanceWatermark, readWatermark, YoungHeads, youngSources } from './young-heads.js';

/*
 * The Store port on DynamoDB: the deployed runtime's state, shared by many Lambda instances at once.
 * Everything lives in one table (key pk/sk, gsi1, gsi2 and gsi3 projecting keys only, TTL on
 * `expiresAt`; see dynamodb-table-schema.ts). The items:
 *
 * | item                | pk                       | sk                 | index (gsi: pk / sk)                                   |
 * | ------------------- | ------------------------ | ------------------ | ------------------------------------------------------ |
 * | job head            | JOB#<id>                 | J                  | top-level: gsi1 L#<wf>#<status>#<0-3> / <createdAt>#<id> |
 * |                     |                          |                    | may hold inline entries, not young: gsi3 OBX#<0-15> / <createdAt>#<seq>#<id> |
 * | job chunk           | JOB#<id>                 | C#<token>#<n>      |                                                        |
 * | commit marker       | JOB#<id>                 | K#<token>          |                                                        |
 * | fan-out step marker | JOB#<id>                 | S#<step>           |                                                        |
 * | timer               | JOB#<job>                | T#<step or ''>     | gsi2 TIM#<0-15> / <at>#<job>#<step>                    |
 * | child index entry   | KIDS#<parent>#<step>#<b> | <index>#<child id> |                                                        |
 * | children listing    | KIDS#<parent>#<step>#<b> | L                  | gsi1 CL#<wf>#<0-15> / <createdAt>#<parent>#<step>#<b>  |
 * | fan-out counters    | FAN#<parent>#<step>      | <shard>            | shard 0 while watched: gsi3 FWT#<0-15> / <parent>#<step> |
 * | outbox entry        | OUT#<id>                 | O                  | gsi2 OBX#<0-15> / <createdAt>#<seq>#<id>               |
 * | outbox group        | OUT#<first entry id>     | G                  | gsi2 OBG#<0-15> / <createdAt>#<last seq>#<id>          |
 * | finished job counts | CNT#<0-7>                | <workflow>         |                                                        |
 * | workflow registry   | WFS                      | <name>             |                                                        |
 * | workflow version    | WF#<name>                | <version>          |                                                        |
 * | recovery watermark  | RCV                      | young              |                                                        |
 * | sent requests log   | SNT#<minute>#<0-15>      | <token>            | (TTL: a day)                                           |
 *
 * A job head holds the whole record as JSON (gzip above 400 bytes, to keep heads under the 1 KB of
 * a write unit; chunk items above 300 KB compressed, so no item nears 400 KB), its revision `rev`,
 * and plain attributes for filters. Every commit is conditional on `rev` (or on the head being
 * absent). The job's own requests and follow-ups usually stay in its head until done (inline
 * entries, dynamodb-inline-outbox.ts: a request until the commit that records its reply, marked
 * sent meanwhile in a log shared by every request one call sent), so a commit that sends its job's
 * next steps writes only the head (the head enters gsi3 with its first entries and stays there
 * until its job ends, or until recovery finds it holding none; a top-level job in its first minute
 * stays out of gsi3, recovery finding it through the job listing: dynamodb-young-heads.ts). A
 * commit whose only write is the head is one UpdateItem; one with more (outbox items, timers,
 * counters, created children) is one TransactWriteItems, whose condition on the head makes all of
 * it happen or none: a refused commit writes nothing. Chunks are written first, named by a token of
 * their commit, and become part of the job only when the head points at them: a refused commit's
 * chunks are never read.
 *
 * The requests a commit sends to the children it creates are not outbox items of their own: they go
 * in groups of up to 100, one item and one index entry each (dynamodb-outbox-groups.ts), deleted
 * when every request of the group is acknowledged; recovery sends those of their requests whose
 * child still waits for that attempt.
 *
 * Big commits. A fan-out creates up to 100,000 children with as many outbox entries: far more than
 * a transaction's 100 items. Such a commit first writes everything that is not the job's own as
 * pending versions (dynamodb-pending.ts): each created child, outbox entry and timer is an item
 * with a list `pv` of versions, each tagged with its commit's token, appended by one conditional
 * update that refuses committed items (so children are created only when absent). Then one transaction writes the job's head (conditional on `rev`), a marker item
 * `JOB#<job>`/`K#<token>`, and the job's own counters and timers. A pending version counts only
 * once its marker exists, so until that transaction succeeds nothing of the commit is visible
 * (getJob, listChildren, pendingOutbox, listTimers all resolve versions), and if it fails nothing
 * ever will be. Rival commits from the same revision each append their own version to the same
 * item and so cannot overwrite each other; the loser takes its versions back out afterwards (best
 * effort: a left-over version is never read, it only takes space). The children index entries
 * (`KIDS#…`, sort key index and id) are written plainly: an entry only names a child, and a child
 * that is not committed, or that belongs to another parent, is skipped when listed. A child's own
 * first commit rewrites its head, which removes `pv`. Each marker is read at most once per token
 * and process (then remembered).
 *
 * Fan-in. A child's final commit is one transaction: its head (conditional) and an ADD to one
 * counter shard of its parent's step (`index % shards`), so it counts exactly once; the shards are
 * items of one partition `FAN#<parent>#<step>` (DynamoDB's adaptive capacity can split them), read
 * with one strongly consistent query after the transaction: the last committer always sees the
 * final count. The final commits of several children of one step in one call (a reply batch) are
 * one transaction with one ADD of them all (applyBatch in dynamodb-commit.ts). A finished child's
 * follow-up that only the last child needs (`onlyIfLast`) is left out of the write and written
 * after it only when the counters read then are complete; the fan-out's watcher (shard 0 in gsi3,
 * dynamodb-fan-watch.ts) lets recovery fan in when a crash came between the two. Child results
 * stay in the children's own items and are read back in pages:
 * `listChildren` queries the index entries (strongly consistent; entries are spread over
 * partitions of 1,000 indexes so that a fan-out's creation is not limited by one partition's
 * 1,000 writes a second) and reads the children with strongly consistent BatchGetItem.
 *
 * Listings. Top-level jobs are in gsi1 by workflow and status, sharded 4 ways by id so one busy
 * workflow spreads its index writes (each shard partition takes ~1,000 writes a second); a query
 * reads the shards newest first and merges them. Children are listed through one listing entry per
 * bucket of 1,000 (16 shards per workflow), expanded into the bucket's index entries, and read from
 * the table (status changes of children then cost no index write, and a child no index entry of
 * its own); retention finds finished top-level jobs in that listing too. The outbox (16 shards) and
 * timers (16 shards) are in gsi2 by time, heads that may hold inline entries in gsi3 (16 shards). The
 * indexes hold keys only (an update that keeps an item's index keys writes nothing to them), so
 * their readers fetch the items from the table. Indexes are eventually consistent; only listings,
 * recovery, timers and retention read them, never the commit path.
 *
 * Counts (dynamodb-job-counts.ts). Finished top-level jobs per workflow and status in
 * `CNT#<shard>`/`<workflow>` items moved in the same transaction as the job's status; waiting and
 * running ones counted in their listing partitions of gsi1, so a job's creation is one write. The
 * old status comes from the revision the commit replaces, remembered from the read that preceded it
 * (read again only when not remembered).
 *
 * Retention. `deleteFinishedJobs` deletes whole trees (dynamodb-retention.ts). With
 * `retentionSeconds`, finished jobs' heads and chunks also carry `expiresAt` (TTL, deleted by
 * DynamoDB for free) as a backstop: run the sweep with a shorter retention than the TTL so that
 * trees are removed whole first, and keep the TTL longer than any fan-out runs (a child's TTL
 * counts from its own end).
 *
 * Throttling and transaction conflicts are retried with backoff and jitter (dynamodb-retry.ts); a
 * failed condition never is: it is `{ ok: false, conflict: true }`.
 */

export interface DynamoDbStoreOptions {
  /** Created once per container by the caller, who also destroys it. */
  client: DynamoDBClient;
  tableName: string;
  /** TTL: finished jobs' items expire this long after they ended. Unset: no TTL. */
  retentionSeconds?: number;
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
  private readonly commitDeps: CommitDeps;
  /** Which job's head holds each inline request this store committed or recovered. */
  private readonly inline = new InlineRequests();
  /** Which group item holds each request for a created child this store committed or recovered. */
  private readonly groups = new GroupRequests();
  private closed = false;

  constructor(options: DynamoDbStoreOptions) {
    this.table = new DynamoDbTable(options.client, options.tableName, options.retry ?? DEFAULT_RETRY_POLICY);
    this.pending = new PendingWrites(this.table);
    this.reader = new JobReader(this.table, this.pending, this.heads);
    this.fans = new FanCounters(this.table, this.pending, options.counterShards ?? defaultCounterShards);
    this.workflows = new DynamoDbWorkflows(this.table);
    this.commitDeps = {
      table: this.table,
      pending: this.pending,
      fans: this.fans,
      heads: this.heads,
      retentionSeconds: options.retentionSeconds,
      newToken: newCommitToken,
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

  setFanCounts(parentId: string, step: string, counts: FanCounts): Promise<void> {
    return this.fans.set(parentId, step, counts);
  }

  queryJobs(query: JobQuery): Promise<JobPage> {
    return queryJobs(this.table, this.reader, query);
  }

  countJobs(workflow: string): Promise<Record<JobStatus, number>> {
    return readCounts(this.table, workflow);
  }

  /**
   * A whole pass with `createdBefore` (its last page) moves the young heads' watermark on
   * (dynamodb-young-heads.ts).
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
   * sent, in one item (dynamodb-sent-log.ts); other inline entries are removed from their heads.
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

  /** Also deletes the groups of requests left for the deleted children (dynamodb-outbox-groups.ts). */
  async deleteFinishedJobs(endedBefore: number): Promise<number> {
    const deleted = await deleteFinishedJobs(this.table, endedBefore);
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
