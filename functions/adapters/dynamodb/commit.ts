import { randomUUID } from 'node:crypto';
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import {
  type Commit,
  type CommitResult,
  type FanCounts,
  followUpNotNeeded,
  isFinished,
  type JobRecord,
  type OutboxEntry,
  requestStillOpen,
} from '../../../engine/index.js';
import { childPacks } from './child-packs.js';
import {
  childListing,
  childListingKey,
  expiryExtra,
  type Normalized,
  normalize,
  outboxParts,
  timerIndex,
  timerItem,
  timerPayload,
} from './commit-items.js';
import type { FanCounters } from './fan-counters.js';
import { fanWatch } from './fan-watch.js';
import {
  type HeldEntry,
  heldEntries,
  heldOf,
  type InlinePlan,
  inlineAttributes,
  inlineIndexKey,
  MAX_HELD_BYTES,
  planInline,
} from './inline-outbox.js';
import { chunkKeys, chunkRefOf, encodeJson, itemBytes, keys, N, S } from './items.js';
import { countsChange, countsKey, finishedCountsChange } from './job-counts.js';
import {
  HEAD_INLINE_LIMIT,
  type HeadCache,
  type HeadInline,
  type HeadMeta,
  type HeadUpdate,
  headItem,
  headMeta,
  headUpdate,
  PENDING_INLINE_LIMIT,
} from './job-items.js';
import { type GroupPlan, planGroups } from './outbox-groups.js';
import { keyId, type PendingPut, type PendingWrites } from './pending.js';
import { cancellationReasons, isConditionFailure } from './retry.js';
import { limitWrites } from './running-limits.js';
import type { DynamoDbTable, Item, Key } from './table.js';
import { takenIds } from './taken-ids.js';
import { refusedAlone, treeWrites } from './tree-sizes.js';
import { youngRuleCovers } from './young-heads.js';

export interface CommitDeps {
  table: DynamoDbTable;
  pending: PendingWrites;
  fans: FanCounters;
  heads: HeadCache;
  retentionSeconds?: number;
  newToken: () => string;
  /** Committed jobs by id: tells a created child's id held by another job from that child written before. */
  readJobs: (ids: readonly string[]) => Promise<Map<string, JobRecord>>;
  /** Told which entries (short ids, with their times) a commit kept in its job's head, for marking them sent later. */
  onInline?: (jobId: string, entries: readonly { short: string; createdAt: number }[]) => void;
  /** Told which requests a commit wrote into a group item (outbox-groups.ts). */
  onGroup?: (key: Key, ids: readonly string[]) => void;
  /** Whether the workflow is known to be registered (young-heads.ts); unknown: as if not. */
  isRegistered?: (workflow: string) => boolean;
}

const MAX_TRANSACTION_ITEMS = 100;
/** DynamoDB takes 4 MB per transaction; the estimate of item sizes is rough, so stay well under. */
const MAX_TRANSACTION_BYTES = 3_000_000;

/** Counter shards that the fan-outs started by one commit may write in its transaction, together. */
const FAN_SHARD_BUDGET = 60;

const CONFLICT: CommitResult = { ok: false, conflict: true };

/** One write of a transaction; `createOf` ties it to a created job (dropped if that job exists). */
interface Planned {
  op: TransactWriteItem;
  bytes: number;
  createOf?: string;
  /** The child's count in its parent's fan-out counters (a batch counts its children in one update). */
  counts?: true;
  /** A write of the job's `maxRunning` change: its condition refused is a conflict, as the head's is. */
  limit?: true;
  /** A write of the job's tree change (tree-sizes.ts): its condition refused is a conflict too. */
  tree?: true;
}

const put = (item: Item, condition?: string): Planned => ({
  op: { Put: { TableName: undefined, Item: item, ...(condition ? { ConditionExpression: condition } : {}) } },
  bytes: itemBytes(item) + 100,
});
const remove = (key: Key): Planned => ({ op: { Delete: { TableName: undefined, Key: key } }, bytes: 200 });
const update = (op: TransactWriteItem): Planned => ({ op, bytes: 300 });

/**
 * Applies one commit (see README.md in this folder): small ones as one conditional
 * write or one transaction, big ones (more than a transaction holds) as pending writes revealed by
 * the transaction that writes the job.
 */
export async function applyCommit(deps: CommitDeps, commit: Commit): Promise<CommitResult> {
  const { job } = commit;
  if (commit.tree && refusedAlone(commit.tree)) return CONFLICT;
  const topLevel = job.parent === null;
  let before: HeadMeta | undefined;
  if (commit.expectedRev > 0) {
    before = deps.heads.get(job.id, commit.expectedRev);
    if (!before && (topLevel || commit.dropUnsent)) {
      const stored = await deps.table.get(keys.head(job.id));
      const item = stored && (await deps.pending.resolve(stored));
      before = item && headMeta(item);
      if (before?.rev !== commit.expectedRev) {
        deps.heads.delete(job.id);
        return CONFLICT;
      }
    }
  }
  const outcome = commit.childOutcome;
  const shards = outcome && (await deps.fans.shardsOf(outcome.parentId, outcome.step));
  const plan = new CommitPlan(deps, commit, before, shards);
  await plan.prepare();
  const result = plan.small() ? await plan.writeSmall() : await plan.writeBig();
  if (!result.ok) {
    deps.heads.delete(job.id);
    return result;
  }
  return plan.afterWrite();
}

/** Children's final commits of one fan-out step in one transaction, at most this many. */
const MAX_BATCH = 25;

/**
 * Applies commits that each move a counter (a reply batch; each job once) by counter: the final
 * commits of children of one fan-out step, and the status changes of top-level jobs of one
 * workflow whose replaced status this process knows. One transaction holds every job's head (each
 * conditional on its revision) and one update of one counter item adding them all up, so counting
 * costs one write for the batch rather than one a job. A job whose condition fails is taken out (a
 * conflict, as alone) and the rest written again; a commit that is not small, or counts nothing, is
 * applied alone. Each job still counts exactly once: its count is in the transaction that writes
 * its revision.
 */
export async function applyBatch(deps: CommitDeps, commits: readonly Commit[]): Promise<CommitResult[]> {
  const results: CommitResult[] = new Array(commits.length);
  const batched: { n: number; plan: CommitPlan; ops: NonNullable<ReturnType<CommitPlan['batchOps']>> }[] = [];
  const alone: number[] = [];
  for (const [n, commit] of commits.entries()) {
    const outcome = commit.childOutcome;
    const shards = outcome && (await deps.fans.shardsOf(outcome.parentId, outcome.step));
    const before = deps.heads.get(commit.job.id, commit.expectedRev);
    const topLevel = commit.job.parent === null;
    if (
      commit.dropUnsent ||
      commit.limit !== undefined ||
      commit.tree !== undefined ||
      commit.expectedRev === 0 ||
      (topLevel ? before === undefined || outcome !== undefined : shards === undefined)
    ) {
      alone.push(n);
      continue;
    }
    const plan = new CommitPlan(deps, commit, before, topLevel ? undefined : shards);
    await plan.prepare();
    const ops = plan.small() ? plan.batchOps() : undefined;
    if (ops) batched.push({ n, plan, ops });
    else alone.push(n);
  }
  const bySteps = new Map<string, typeof batched>();
  for (const entry of batched) {
    const key = entry.ops.tally.group;
    const list = bySteps.get(key);
    if (list) list.push(entry);
    else bySteps.set(key, [entry]);
  }
  const rounds: (typeof batched)[] = [];
  for (const members of bySteps.values()) {
    let round: typeof batched = [];
    let count = 1;
    let bytes = 0;
    for (const entry of members) {
      const size = 1 + entry.ops.items.length;
      if (
        round.length &&
        (round.length >= MAX_BATCH ||
          count + size > MAX_TRANSACTION_ITEMS ||
          bytes + entry.ops.bytes > MAX_TRANSACTION_BYTES)
      ) {
        rounds.push(round);
        round = [];
        count = 1;
        bytes = 0;
      }
      round.push(entry);
      count += size;
      bytes += entry.ops.bytes;
    }
    if (round.length) rounds.push(round);
  }
  await Promise.all([
    ...alone.map(async (n) => {
      results[n] = await applyCommit(deps, commits[n] as Commit);
    }),
    ...rounds.map(async (members) => {
      const written = await writeBatch(deps, members);
      const counted = written[0]?.plan.countedIn;
      const counts = counted && { value: await deps.fans.read(counted.parentId, counted.step) };
      for (const member of written) results[member.n] = await member.plan.afterWrite(counts);
    }),
  ]);
  // The members a batch dropped lost on their revision.
  return Array.from(
    { length: commits.length },
    (_, n) => results[n] ?? batched.find((member) => member.n === n)?.plan.conflict() ?? CONFLICT,
  );
}

/** One batch's transaction, retried without the children whose revision moved on; returns those written. */
async function writeBatch<
  T extends { plan: CommitPlan; ops: NonNullable<ReturnType<CommitPlan['batchOps']>> },
>(deps: CommitDeps, members: readonly T[]): Promise<T[]> {
  let left = [...members];
  while (left.length) {
    const first = left[0] as T;
    const sums = new Map<string, number>();
    for (const member of left)
      for (const [name, by] of Object.entries(member.ops.tally.adds))
        sums.set(name, (sums.get(name) ?? 0) + by);
    const ops: TransactWriteItem[] = [];
    const owners: (T | undefined)[] = [];
    for (const member of left) {
      ops.push(member.ops.head, ...member.ops.items.map((item) => item.op));
      owners.push(member, ...member.ops.items.map(() => undefined));
    }
    const counter = tallyUpdate(first.ops.tally.key, sums);
    if (counter) ops.push(counter);
    try {
      await deps.table.transact(ops, randomUUID());
      return left;
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (!reasons) throw error;
      const lost = new Set<T>();
      reasons.forEach((reason, n) => {
        const owner = owners[n];
        if (reason.Code === 'ConditionalCheckFailed' && owner) lost.add(owner);
      });
      if (!lost.size) throw error;
      left = left.filter((member) => !lost.has(member));
    }
  }
  return [];
}

/** What a commit adds to a counter item: a fan-out shard (`dn`/`fl`) or a workflow's job counts (by status). */
interface Tally {
  /** Commits of one group add to one item together. */
  group: string;
  key: Key;
  adds: Record<string, number>;
}

/** One ADD of a batch's tallies (none when they cancel out). */
function tallyUpdate(key: Key, sums: ReadonlyMap<string, number>): TransactWriteItem | undefined {
  const names: Record<string, string> = {};
  const values: Item = {};
  const adds: string[] = [];
  for (const [name, by] of sums) {
    if (!by) continue;
    const n = adds.length;
    names[`#c${n}`] = name;
    values[`:c${n}`] = N(by);
    adds.push(`#c${n} :c${n}`);
  }
  if (!adds.length) return undefined;
  return {
    Update: {
      TableName: undefined,
      Key: key,
      UpdateExpression: `ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

class CommitPlan {
  private readonly token: string;
  private readonly job: JobRecord;
  private readonly parts: Normalized;
  private readonly ownRequests: string[];
  private readonly headJson;
  private readonly createdIds: Set<string>;
  /** Writes that always go in the job's transaction. */
  private readonly core: Planned[] = [];
  /** Chunk items to write before anything points at them. */
  private readonly chunks: Item[] = [];
  private counted?: { parentId: string; step: string };
  private tally?: Tally;

  /** The counter shard this commit's child counts in (with its step), when it counts one. */
  get countedIn(): { parentId: string; step: string; shard: number } | undefined {
    const outcome = this.commit.childOutcome;
    if (!this.counted || !outcome || this.shards === undefined) return undefined;
    return { ...this.counted, shard: outcome.index % this.shards };
  }

  /** What the replaced revision held, when only the write could tell (single conditional write). */
  private oldChunk?: { pk: string; token: string; count: number };
  private oldObx?: string[];
  private oldHeld?: Record<string, HeldEntry>;
  /** Inline entries the replaced revision holds that this commit removes. */
  private readonly dropped: string[] = [];
  /** The inline entries the head holds after this commit, when known. */
  private readonly heldAfter?: Record<string, HeldEntry>;
  private readonly overwrites: Item[] = [];
  /** The job's own requests kept in its head (inline-outbox.ts) instead of outbox items. */
  readonly inline?: InlinePlan;
  /** Ids of the request entries of each job this commit sends to (for dropping unsent ones later). */
  private readonly requestsByJob = new Map<string, string[]>();
  /** Requests for created children, many to an item (outbox-groups.ts). */
  private readonly groups: GroupPlan[];
  /** The entries that are outbox items of their own, with their positions in the commit. */
  private readonly items: [number, OutboxEntry][];
  /**
   * A finishing child's follow-up that only the last child of its fan-out needs: left out of the
   * write, and written after it only when the counters show this child may be the last.
   */
  private readonly deferred: [number, OutboxEntry][] = [];

  constructor(
    private readonly deps: CommitDeps,
    private readonly commit: Commit,
    private readonly before: HeadMeta | undefined,
    /** Counter shards of the parent's fan-out step this commit counts a child in (none: not counted). */
    private readonly shards: number | undefined,
  ) {
    this.token = deps.newToken();
    this.job = commit.job;
    const normalized = normalize(commit);
    let parts = normalized;
    const outcome = commit.childOutcome;
    if (shards !== undefined && outcome && deps.fans.isWatched(outcome.parentId, outcome.step)) {
      // Whether an entry can be left out at all: as when the counters show others still to finish.
      const short: FanCounts = { total: 1, done: 0, failed: 0 };
      normalized.outbox.forEach((entry, seq) => {
        if (followUpNotNeeded(entry, outcome, short)) this.deferred.push([seq, entry]);
      });
      if (this.deferred.length) {
        const left = new Set(this.deferred.map(([, entry]) => entry.id));
        parts = { ...normalized, outbox: normalized.outbox.filter((entry) => !left.has(entry.id)) };
      }
    }
    const heldBefore = commit.expectedRev === 0 ? {} : before?.held;
    const kept = heldBefore && { ...heldBefore };
    if (kept) {
      // A stopping job's requests, and those a reply (or a timeout) answered: no longer to send.
      for (const [short, { request }] of Object.entries(kept))
        if (request && (commit.dropUnsent || !requestStillOpen(this.job, request))) {
          this.dropped.push(short);
          delete kept[short];
        }
    }
    const keptBytes = Object.values(kept ?? {}).reduce((sum, { bytes }) => sum + bytes, 0);
    this.inline = planInline(
      this.job.id,
      parts.outbox,
      kept && MAX_HELD_BYTES - keptBytes,
      commit.dropUnsent,
    );
    this.heldAfter = kept && {
      ...kept,
      ...Object.fromEntries(this.inline?.entries.map((entry) => [entry.short, heldOf(entry)]) ?? []),
    };
    const inlined = new Set(this.inline?.entries.map(({ entry }) => entry.id));
    this.parts = inlined.size
      ? { ...parts, outbox: parts.outbox.filter((entry) => !inlined.has(entry.id)) }
      : parts;
    this.createdIds = new Set(this.parts.creates.map((child) => child.id));
    const children = new Set(this.parts.creates.filter((child) => child.parent).map((child) => child.id));
    const split = planGroups(this.parts.outbox, children);
    this.groups = split.groups;
    this.items = split.rest;
    for (const [, entry] of this.items) {
      if (entry.kind !== 'request') continue;
      const ids = this.requestsByJob.get(entry.jobId);
      if (ids) ids.push(entry.id);
      else this.requestsByJob.set(entry.jobId, [entry.id]);
    }
    this.ownRequests = this.requestsOf(this.job.id);
    this.headJson = encodeJson(
      this.job,
      HEAD_INLINE_LIMIT,
      keys.jobPk(this.job.id),
      this.token,
      expiryExtra(this.job, deps.retentionSeconds),
    );
    this.chunks.push(...this.headJson.chunks);
  }

  private headOp(): HeadUpdate {
    const obx = this.commit.dropUnsent ? { set: this.ownRequests } : { add: this.ownRequests };
    const changed = this.inline !== undefined || this.dropped.length > 0;
    const inline: HeadInline = {
      add: this.inline && inlineAttributes(this.inline),
      drop: this.dropped,
      ids: changed ? Object.keys(this.heldAfter ?? {}) : undefined,
      index: this.indexChange(),
    };
    return headUpdate(
      this.job,
      this.headJson.attrs,
      this.commit.expectedRev,
      obx,
      this.deps.retentionSeconds,
      inline,
    );
  }

  /**
   * The head's place in gsi3 (inline-outbox.ts): a running job stays there between its
   * rounds of requests, and only an ended one that holds nothing leaves it here; a young top-level
   * job keeps its entries out of it (young-heads.ts).
   */
  private indexChange(): HeadInline['index'] {
    const held = this.heldAfter && Object.keys(this.heldAfter);
    if (held?.length === 0) return isFinished(this.job.status) ? 'leave' : undefined;
    const statusBefore = this.commit.expectedRev === 0 ? this.job.status : this.before?.status;
    if (youngRuleCovers(this.job, statusBefore, this.deps.isRegistered?.(this.job.workflow) === true))
      return undefined;
    if (this.inline) return { enter: this.inline.index };
    // Entries of earlier commits: from the job's creation on, no later than any of them.
    return held === undefined ? undefined : { enter: inlineIndexKey(this.job.id, this.job.createdAt) };
  }

  /** The writes every path puts in the job's own transaction: counters, its own timers and inits. */
  async prepare(): Promise<void> {
    const { job, commit } = this;
    if (commit.expectedRev === 0 && job.parent) {
      // A child created by its own commit is indexed like one its parent created.
      this.core.push(
        put(childPacks([job], this.token)[0] as Item),
        put(childListing(job) as Item),
        put(keys.fanStep(job.parent.id, job.parent.step)),
      );
    }
    if (job.parent === null) {
      const from = commit.expectedRev === 0 ? undefined : this.before?.status;
      const counter = countsChange(job.workflow, job.id, from, job.status);
      const adds = finishedCountsChange(from, job.status);
      if (counter && adds) {
        this.core.push({ ...update(counter), counts: true });
        this.tally = { group: `CNT#${job.workflow}`, key: countsKey(job.workflow, job.id), adds };
      }
    }
    if (commit.limit) {
      for (const op of limitWrites(commit.limit)) this.core.push({ ...update(op), limit: true });
    }
    if (commit.tree) {
      for (const op of treeWrites(commit.tree, job.id)) this.core.push({ ...update(op), tree: true });
    }
    if (commit.childOutcome && this.shards !== undefined) {
      const { parentId, step, index, status } = commit.childOutcome;
      this.core.push({
        ...update(this.deps.fans.outcome(parentId, step, index, status, this.shards)),
        counts: true,
      });
      this.tally = {
        group: `FAN#${parentId}#${step}`,
        key: keys.fanShard(parentId, step, index % this.shards),
        adds: { [status === 'completed' ? 'dn' : 'fl']: 1 },
      };
      this.counted = { parentId, step };
    }
    // Fan-outs starting in this commit share what a transaction holds (each shard is an item of it).
    const ownInits = this.parts.fanInits.filter((init) => !this.createdIds.has(init.parentId));
    const shardBudget = Math.max(1, Math.floor(FAN_SHARD_BUDGET / Math.max(1, ownInits.length)));
    for (const init of ownInits) {
      const shards = Math.min(shardBudget, this.deps.fans.shardsFor(init.total));
      this.core.push(
        ...this.deps.fans.items(init.parentId, init.step, init, shards).map((item) => put(item)),
      );
    }
    for (const change of this.parts.timers) {
      if (change.op === 'clear') this.core.push(remove(keys.timer(change.key.jobId, change.key.step)));
      else if (!this.createdIds.has(change.timer.jobId)) this.core.push(put(timerItem(change.timer)));
    }
  }

  /** Everything else as transaction items: timers of created jobs, the outbox, the created jobs. */
  private smallItems(): Planned[] {
    const items: Planned[] = [];
    for (const change of this.parts.timers) {
      if (change.op === 'set' && this.createdIds.has(change.timer.jobId))
        items.push(put(timerItem(change.timer)));
    }
    for (const [seq, entry] of this.items) {
      const parts = outboxParts(entry, seq, this.token);
      this.chunks.push(...parts.chunks);
      items.push(put({ ...keys.outbox(entry.id), ...parts.payload, ...parts.index }));
    }
    this.groups.forEach((group, n) => {
      const json = this.groupJson(group, n, HEAD_INLINE_LIMIT);
      items.push(put({ ...group.key, ...json, ...group.index }));
    });
    const steps = new Set<string>();
    const buckets = new Set<string>();
    for (const child of this.parts.creates) {
      const json = encodeJson(
        child,
        HEAD_INLINE_LIMIT,
        keys.jobPk(child.id),
        this.token,
        expiryExtra(child, this.deps.retentionSeconds),
      );
      this.chunks.push(...json.chunks);
      const obx = this.requestsOf(child.id);
      items.push({
        ...put(headItem(child, json.attrs, obx, this.deps.retentionSeconds), 'attribute_not_exists(pk)'),
        createOf: child.id,
      });
      const counter =
        child.parent === null && countsChange(child.workflow, child.id, undefined, child.status);
      if (counter) items.push({ ...update(counter), createOf: child.id });
      if (child.parent) {
        const bucket = childListingKey(child) as string;
        if (!buckets.has(bucket)) {
          buckets.add(bucket);
          items.push(put(childListing(child) as Item));
        }
        const step = `${child.parent.id}\u0000${child.parent.step}`;
        if (!steps.has(step)) {
          steps.add(step);
          items.push(put(keys.fanStep(child.parent.id, child.parent.step)));
        }
      }
    }
    for (const pack of childPacks(this.parts.creates, this.token)) items.push(put(pack));
    for (const init of this.parts.fanInits) {
      if (!this.createdIds.has(init.parentId)) continue;
      const shards = this.deps.fans.shardsFor(init.total);
      for (const item of this.deps.fans.items(init.parentId, init.step, init, shards))
        items.push({ ...put(item), createOf: init.parentId });
    }
    return items;
  }

  private smallPlan?: Planned[];

  private groupJson(group: GroupPlan, n: number, inlineLimit: number): Item {
    const json = encodeJson(group.entries, inlineLimit, keys.jobPk(this.job.id), `${this.token}g${n}`);
    this.chunks.push(...json.chunks);
    return json.attrs;
  }

  small(): boolean {
    // Too many for a transaction without encoding anything (a fan-out of thousands)?
    const { creates } = this.parts;
    const outbox = this.items.length + this.groups.length;
    if (1 + this.core.length + outbox + creates.length > MAX_TRANSACTION_ITEMS) return false;
    const items = [...this.core, ...this.smallItems()];
    const count = 1 + items.length;
    const bytes = this.headJson.bytes + items.reduce((sum, item) => sum + item.bytes, 0);
    if (count <= MAX_TRANSACTION_ITEMS && bytes <= MAX_TRANSACTION_BYTES) {
      this.smallPlan = items;
      return true;
    }
    // The big path encodes its own writes: forget the chunks the small plan made, except the head's.
    this.chunks.splice(this.headJson.chunks.length);
    return false;
  }

  /**
   * This commit's writes for a batch transaction (applyBatch): its head and its other items, less
   * its count, which the batch adds up; undefined when it is not a small commit counting a child.
   */
  batchOps(): { head: TransactWriteItem; items: Planned[]; bytes: number; tally: Tally } | undefined {
    const { tally } = this;
    if (!tally || !this.smallPlan || this.chunks.length) return undefined;
    const items = this.smallPlan.filter((item) => !item.counts);
    if (items.length !== this.smallPlan.length - 1 || items.some((item) => item.createOf)) return undefined;
    return {
      head: { Update: { TableName: undefined, ...this.headOp() } },
      tally,
      items,
      bytes: this.headJson.bytes + items.reduce((sum, item) => sum + item.bytes, 0),
    };
  }

  /** The job's revision moved on (found by a batch): nothing of this commit was written. */
  conflict(): CommitResult {
    this.deps.heads.delete(this.job.id);
    return CONFLICT;
  }

  async writeSmall(): Promise<CommitResult> {
    let items = this.smallPlan ?? [];
    await this.writeChunks();
    if (!items.length) return this.writeHeadAlone();
    let requestToken = randomUUID();
    for (;;) {
      const head: TransactWriteItem = { Update: { TableName: undefined, ...this.headOp() } };
      try {
        await this.deps.table.transact([head, ...items.map((item) => item.op)], requestToken);
        return this.success();
      } catch (error) {
        const reasons = cancellationReasons(error);
        if (!reasons) throw error;
        if (reasons[0]?.Code === 'ConditionalCheckFailed' || refusedGuard(reasons, items))
          return this.lost([]);
        const existing = new Set<string>();
        reasons.forEach((reason, n) => {
          const createOf = items[n - 1]?.createOf;
          if (reason.Code === 'ConditionalCheckFailed' && createOf) existing.add(createOf);
        });
        if (!existing.size) throw error;
        const taken = await takenIds(this.deps.readJobs, this.parts.creates, existing);
        if (taken.length) return this.taken([], taken);
        // Created only when absent: leave the existing jobs (and what belongs to their creation) alone.
        items = items.filter((item) => !item.createOf || !existing.has(item.createOf));
        requestToken = randomUUID();
      }
    }
  }

  private async writeHeadAlone(): Promise<CommitResult> {
    try {
      const { Attributes } = await this.deps.table.update({ ...this.headOp(), ReturnValues: 'ALL_OLD' });
      this.oldChunk = chunkRefOf(Attributes);
      this.oldObx = Attributes?.obx?.SS ?? (Attributes ? [] : undefined);
      this.oldHeld = Attributes && heldEntries(Attributes);
      return this.success();
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return this.lost([]);
    }
  }

  /**
   * More than one transaction holds: every write that is not the job's own goes first as a pending
   * version under this commit's token; the transaction then writes the job and the token's marker.
   */
  async writeBig(): Promise<CommitResult> {
    const { deps, token, job } = this;
    const topLevelCreates: Planned[] = [];
    const plain: Item[] = [];
    const steps = new Set<string>();
    const buckets = new Set<string>();
    const childPuts: PendingPut[] = [];
    for (const child of this.parts.creates) {
      const json = encodeJson(
        child,
        child.parent ? PENDING_INLINE_LIMIT : HEAD_INLINE_LIMIT,
        keys.jobPk(child.id),
        token,
        expiryExtra(child, deps.retentionSeconds),
      );
      this.chunks.push(...json.chunks);
      const obx = this.requestsOf(child.id);
      if (!child.parent) {
        // A top-level job created by another's commit (never done by the engine): in the transaction.
        const item = headItem(child, json.attrs, obx, deps.retentionSeconds);
        topLevelCreates.push({ ...put(item, 'attribute_not_exists(pk)'), createOf: child.id });
        const counter = countsChange(child.workflow, child.id, undefined, child.status);
        if (counter) topLevelCreates.push({ ...update(counter), createOf: child.id });
        continue;
      }
      const bucket = childListingKey(child) as string;
      if (!buckets.has(bucket)) {
        buckets.add(bucket);
        plain.push(childListing(child) as Item);
      }
      const step = `${child.parent.id}\u0000${child.parent.step}`;
      if (!steps.has(step)) {
        steps.add(step);
        plain.push(keys.fanStep(child.parent.id, child.parent.step));
      }
      const payload: Item = { ...json.attrs };
      if (obx.length) payload.obx = { SS: [...new Set(obx)] };
      childPuts.push({ key: keys.head(child.id), payload, top: headItemTop(child, deps.retentionSeconds) });
    }
    plain.push(...childPacks(this.parts.creates, token));

    /** `committed`: what to write over an item that turned out to be committed already (none: leave it). */
    const others: (PendingPut & { committed?: Item })[] = [];
    for (const [seq, entry] of this.items) {
      const parts = outboxParts(entry, seq, token);
      this.chunks.push(...parts.chunks);
      const key = keys.outbox(entry.id);
      others.push({
        key,
        payload: parts.payload,
        top: parts.index,
        committed: { ...key, ...parts.payload, ...parts.index },
      });
    }
    this.groups.forEach((group, n) => {
      const json = this.groupJson(group, n, PENDING_INLINE_LIMIT);
      others.push({
        key: group.key,
        payload: json,
        top: group.index,
        committed: { ...group.key, ...json, ...group.index },
      });
    });
    for (const change of this.parts.timers) {
      if (change.op !== 'set' || !this.createdIds.has(change.timer.jobId)) continue;
      const { timer } = change;
      others.push({
        key: keys.timer(timer.jobId, timer.step),
        payload: timerPayload(timer),
        top: timerIndex(timer),
        committed: timerItem(timer),
      });
    }

    await this.writeChunks();
    await deps.table.batchWrite(plain.map((item) => ({ put: item })));
    const written: Key[] = [];
    const existingChildren = await deps.pending.putAll(childPuts, token, job.id);
    for (const { key } of childPuts) if (!existingChildren.has(keyId(key))) written.push(key);
    if (existingChildren.size) {
      const found = new Set(
        this.parts.creates
          .filter((child) => existingChildren.has(keyId(keys.head(child.id))))
          .map((c) => c.id),
      );
      const taken = await takenIds(deps.readJobs, this.parts.creates, found);
      if (taken.length) return this.taken(written, taken);
    }
    for (const init of this.parts.fanInits) {
      if (!this.createdIds.has(init.parentId) || existingChildren.has(keyId(keys.head(init.parentId))))
        continue;
      const shards = deps.fans.shardsFor(init.total);
      others.push({
        key: keys.fanShard(init.parentId, init.step, 0),
        payload: deps.fans.pendingBase(init, shards),
        top: fanWatch(init.parentId, init.step),
      });
    }
    const existing = await deps.pending.putAll(others, token, job.id);
    for (const other of others) {
      if (!existing.has(keyId(other.key))) written.push(other.key);
      else if (other.committed) this.overwrites.push(other.committed);
    }

    let items = [
      put({ ...keys.marker(job.id, token), at: N(job.updatedAt) }),
      ...this.core,
      ...topLevelCreates,
    ];
    if (1 + items.length > MAX_TRANSACTION_ITEMS) {
      await this.withdraw(written);
      throw new Error(
        `commit of job ${job.id} needs ${1 + items.length} writes in one transaction (at most ${MAX_TRANSACTION_ITEMS}): too many timers or fan-outs at once`,
      );
    }
    let requestToken = randomUUID();
    for (;;) {
      const head: TransactWriteItem = { Update: { TableName: undefined, ...this.headOp() } };
      try {
        await deps.table.transact([head, ...items.map((item) => item.op)], requestToken);
        break;
      } catch (error) {
        const reasons = cancellationReasons(error);
        if (reasons?.[0]?.Code === 'ConditionalCheckFailed' || (reasons && refusedGuard(reasons, items)))
          return this.lost(written);
        const found = new Set<string>();
        reasons?.forEach((reason, n) => {
          const createOf = items[n - 1]?.createOf;
          if (reason.Code === 'ConditionalCheckFailed' && createOf) found.add(createOf);
        });
        if (!found.size) {
          await this.withdraw(written);
          throw error;
        }
        items = items.filter((item) => !item.createOf || !found.has(item.createOf));
        requestToken = randomUUID();
      }
    }
    deps.pending.noteCommitted(job.id, token);
    return this.success();
  }

  private requestsOf(jobId: string): string[] {
    return this.requestsByJob.get(jobId) ?? [];
  }

  private async writeChunks(): Promise<void> {
    if (this.chunks.length) await this.deps.table.batchWrite(this.chunks.map((item) => ({ put: item })));
  }

  private success(): CommitResult {
    return { ok: true };
  }

  /** Created children's ids are held by other jobs: take back what this commit wrote ahead, and say which. */
  private async taken(pendingKeys: readonly Key[], ids: string[]): Promise<CommitResult> {
    await this.withdraw(pendingKeys);
    return { ok: false, conflict: false, taken: ids };
  }

  /** The job's revision moved on: take back what this commit wrote ahead (best effort; it is invisible anyway). */
  private async lost(pendingKeys: readonly Key[]): Promise<CommitResult> {
    await this.withdraw(pendingKeys);
    return CONFLICT;
  }

  private async withdraw(pendingKeys: readonly Key[]): Promise<void> {
    try {
      await this.deps.pending.withdraw(pendingKeys, this.token);
      if (this.chunks.length)
        await this.deps.table.batchWrite(
          this.chunks.map((item) => ({ delete: { pk: item.pk, sk: item.sk } as Key })),
        );
    } catch {
      // Left-overs of a lost commit are never read (no marker names their token): only storage.
    }
  }

  /**
   * After the job's write: drop unsent requests, delete replaced chunks, finish overwrites, cache.
   * `counts`: the fan-out counters as read after a batch's write (else read here).
   */
  async afterWrite(counts?: { value: FanCounts | undefined; fanInStored?: boolean }): Promise<CommitResult> {
    const { deps, job, commit } = this;
    const meta: HeadMeta = {
      rev: job.rev,
      status: job.status,
      chunk: chunkRefOf({ ...this.headJson.attrs, pk: S(keys.jobPk(job.id)) }),
      obx: commit.dropUnsent
        ? this.ownRequests
        : [...new Set([...(this.before?.obx ?? this.oldObx ?? []), ...this.ownRequests])],
      held: this.heldAfter ?? this.oldHeld ?? {},
    };
    if (this.inline)
      deps.onInline?.(
        job.id,
        this.inline.entries.map(({ short, entry }) => ({ short, createdAt: entry.createdAt })),
      );
    if (commit.expectedRev === 0 || this.before || this.oldObx || commit.dropUnsent)
      deps.heads.set(job.id, meta);
    else deps.heads.delete(job.id);

    const deletes: Key[] = [];
    const oldChunk = this.before?.chunk ?? this.oldChunk;
    if (oldChunk && oldChunk.token !== meta.chunk?.token) deletes.push(...chunkKeys(oldChunk));
    if (commit.dropUnsent) {
      const keep = new Set(this.ownRequests);
      for (const id of this.before?.obx ?? this.oldObx ?? [])
        if (!keep.has(id)) deletes.push(keys.outbox(id));
    }
    await deps.table.batchWrite([
      ...this.overwrites.map((item) => ({ put: item })),
      ...deletes.map((key) => ({ delete: key })),
    ]);
    for (const group of this.groups)
      deps.onGroup?.(
        group.key,
        group.entries.map(([, entry]) => entry.id),
      );
    if (!this.counted) return { ok: true };
    const fanCounts = counts ? counts.value : await deps.fans.read(this.counted.parentId, this.counted.step);
    const leftOut = await this.settleDeferred(fanCounts, counts);
    if (!fanCounts) return { ok: true };
    return leftOut.length ? { ok: true, fanCounts, leftOut } : { ok: true, fanCounts };
  }

  /**
   * The follow-ups only the last child needs: left out when the counters (read after this child
   * was counted, strongly consistent) fall short of the total, since the child that completes them
   * reads them after its own write and finds them complete. Otherwise written now, as outbox items
   * (one for a whole batch of children), by the one commit that takes the fan-in (`takeFanIn`):
   * commits that finish the last children at the same moment all find the counters complete.
   * A crash before that write is covered by the fan-out's watcher (fan-watch.ts), which
   * recovery reads: a step whose counters are complete while it still runs gets its fan-in then.
   */
  private async settleDeferred(
    counts: FanCounts | undefined,
    batch?: { fanInStored?: boolean },
  ): Promise<string[]> {
    const outcome = this.commit.childOutcome;
    const leftOut: string[] = [];
    const needed: Item[] = [];
    for (const [seq, entry] of this.deferred) {
      // Children finishing in one batch finish together: one of their follow-ups does for all.
      if (followUpNotNeeded(entry, outcome, counts) || (counts && batch?.fanInStored)) {
        leftOut.push(entry.id);
        continue;
      }
      if (counts && batch) batch.fanInStored = true;
      // Another batch that finished the last children at the same moment took the fan-in.
      if (
        outcome &&
        counts &&
        !(await this.deps.fans.takeFanIn(outcome.parentId, outcome.step, this.token))
      ) {
        leftOut.push(entry.id);
        continue;
      }
      const parts = outboxParts(entry, seq, this.token);
      needed.push(...parts.chunks, { ...keys.outbox(entry.id), ...parts.payload, ...parts.index });
    }
    if (needed.length) await this.deps.table.batchWrite(needed.map((item) => ({ put: item })));
    return leftOut;
  }
}

/** Whether a transaction (the head, then `items`) was refused by a `maxRunning` or a tree condition. */
function refusedGuard(reasons: readonly { Code?: string }[], items: readonly Planned[]): boolean {
  return reasons.some((reason, n) => {
    const item = items[n - 1];
    return reason.Code === 'ConditionalCheckFailed' && (item?.limit === true || item?.tree === true);
  });
}

/** The attributes every version of a pending head shares (its revision for the first commit's condition). */
function headItemTop(child: JobRecord, retentionSeconds: number | undefined): Item {
  const { pk: _pk, sk: _sk, ...rest } = headItem(child, {}, [], retentionSeconds);
  return rest;
}
