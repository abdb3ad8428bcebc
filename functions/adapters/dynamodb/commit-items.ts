import {
  type Commit,
  type FanInit,
  type JobRecord,
  type OutboxEntry,
  type Timer,
  type TimerChange,
  timerId,
} from '../../../engine/index.js';
import { CHILD_BUCKET, encodeJson, gsi, keys, N, pad, S, SHARDS, shardOf, time } from './items.js';
import { expiryOf, HEAD_INLINE_LIMIT } from './job-items.js';
import type { Item } from './table.js';

/** The items a commit writes besides job heads: timers, outbox entries, children index entries. */

export function timerItem(timer: Timer): Item {
  return {
    ...keys.timer(timer.jobId, timer.step),
    ...timerPayload(timer),
    ...timerIndex(timer),
  };
}

export const timerPayload = (timer: Timer): Item => ({ t: S(JSON.stringify(timer)) });
export const timerIndex = (timer: Timer): Item => ({
  gsi2pk: S(gsi.timers(shardOf(timer.jobId, SHARDS.timers))),
  gsi2sk: S(`${time(timer.at)}#${timer.jobId}#${timer.step ?? ''}`),
});

/** An outbox entry: `OUT#<id>`, its JSON (a large body in chunks under its job), indexed by time (gsi2). */
export function outboxParts(
  entry: OutboxEntry,
  seq: number,
  token: string,
): { payload: Item; index: Item; chunks: Item[] } {
  const json = encodeJson(entry, HEAD_INLINE_LIMIT, keys.jobPk(entry.jobId), `${token}o${seq}`);
  return {
    payload: json.attrs,
    index: {
      gsi2pk: S(gsi.outbox(shardOf(entry.id, SHARDS.outbox))),
      gsi2sk: S(`${time(entry.createdAt)}#${pad(seq, 6)}#${entry.id}`),
    },
    chunks: json.chunks,
  };
}

/**
 * The listing entry of a bucket of a fan-out step's children: `KIDS#<parent>#<step>#<bucket>` /
 * `L`, in gsi1 `CL#<workflow>#<shard>` / `<createdAt>#<parent>#<step>#<bucket>`. The children
 * listing (job-query.ts) reads it and then the bucket's entries, so a fan-out writes one
 * index entry per 1,000 children rather than one per child. A child of the bucket is listed with
 * the sort `<listing sort>#<index>`. The key (`childListingKey`) names the bucket, once per commit.
 */
export function childListing(child: JobRecord): Item | undefined {
  const parent = child.parent;
  if (!parent) return undefined;
  const bucket = Math.floor(parent.index / CHILD_BUCKET);
  return {
    pk: S(keys.childrenPk(parent.id, parent.step, bucket)),
    sk: S(keys.childListing()),
    gsi1pk: S(
      gsi.childListing(child.workflow, shardOf(`${parent.id}#${parent.step}#${bucket}`, SHARDS.childListing)),
    ),
    gsi1sk: S(gsi.childBucket(child.createdAt, parent.id, parent.step, bucket)),
  };
}

export const childListingKey = (child: JobRecord): string | undefined =>
  child.parent
    ? `${child.parent.id}\u0000${child.parent.step}\u0000${Math.floor(child.parent.index / CHILD_BUCKET)}`
    : undefined;

export const expiryExtra = (job: JobRecord, retentionSeconds: number | undefined): Item => {
  const expiresAt = expiryOf(job, retentionSeconds);
  return expiresAt === undefined ? {} : { expiresAt: N(expiresAt) };
};

/** A commit with its duplicates resolved as the reference store would: last timer, entry and init win. */
export interface Normalized {
  timers: TimerChange[];
  outbox: OutboxEntry[];
  fanInits: FanInit[];
  creates: JobRecord[];
}

export function normalize(commit: Commit): Normalized {
  const timers = new Map<string, TimerChange>();
  for (const change of commit.timers)
    timers.set(timerId(change.op === 'set' ? change.timer : change.key), change);
  const outbox = new Map<string, OutboxEntry>();
  for (const entry of commit.outbox) outbox.set(entry.id, entry);
  const fanInits = new Map<string, FanInit>();
  for (const init of commit.fanInits) fanInits.set(`${init.parentId}\u0000${init.step}`, init);
  const creates = new Map<string, JobRecord>();
  for (const child of commit.creates)
    if (child.id !== commit.job.id && !creates.has(child.id)) creates.set(child.id, child);
  return {
    timers: [...timers.values()],
    outbox: [...outbox.values()],
    fanInits: [...fanInits.values()],
    creates: [...creates.values()],
  };
}
