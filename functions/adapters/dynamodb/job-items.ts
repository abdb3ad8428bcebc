import { isFinished, type JobRecord, type JobStatus, listedStatusOf } from '../../../engine/index.js';
import { type HeldEntry, heldEntries, INLINE_INDEX, inlineAttribute } from './inline-outbox.js';
import {
  type ChunkRef,
  chunkRefOf,
  gsi,
  JSON_ATTRIBUTES,
  keys,
  N,
  num,
  S,
  SHARDS,
  shardOf,
  str,
} from './items.js';
import type { Item, Key } from './table.js';

/** A job's JSON up to this size (compressed) stays in its head item; larger, it goes to chunks. */
export const HEAD_INLINE_LIMIT = 300_000;
/** A pending version shares its item with rivals' versions, so it keeps less inline. */
export const PENDING_INLINE_LIMIT = 64_000;

/** Attributes a head write sets or removes (everything but the key, `obx` and `del`). */
const HEAD_ATTRIBUTES = [
  'rev',
  'st',
  'wf',
  'ca',
  'ea',
  'vh',
  'par',
  'gsi1pk',
  'gsi1sk',
  'gsi2pk',
  'gsi2sk',
  'expiresAt',
  'tt',
  ...JSON_ATTRIBUTES,
  'pv',
  'po',
] as const;

/**
 * Epoch seconds when a finished top-level job's items may expire (its end + the retention), or
 * undefined while it runs. A fan-out child's items expire with its root's tree (ttl-stamps.ts): a
 * child's own end says nothing of how long its parent will still read it.
 */
export function expiryOf(job: JobRecord, retentionSeconds: number | undefined): number | undefined {
  if (retentionSeconds === undefined || job.parent !== null || !isFinished(job.status)) return undefined;
  return Math.ceil((job.endedAt ?? job.updatedAt) / 1_000) + retentionSeconds;
}

/**
 * How long past the retention a fan-out child's head may outlive its root's. A child's head gets
 * an expiry when it is created, its tree's horizon: its creation + the retention + this slack. A
 * tree that ends within the slack of its children's creation then needs no stamp on their heads
 * (the stamp only ever raises an expiry), and the hourly keep-alive (tree-horizons.ts) raises the
 * horizon of a tree that runs so long that it comes near.
 */
export const TREE_SLACK_SECONDS = 86_400;

/** Epoch seconds of the horizon of a tree item written at `at` (ms): see `TREE_SLACK_SECONDS`. */
export const treeHorizon = (at: number, retentionSeconds: number): number =>
  Math.ceil(at / 1_000) + retentionSeconds + TREE_SLACK_SECONDS;

/**
 * A top-level job that made items beyond its head and chunks: fan-out children (their heads, index
 * entries, counters, markers) or a call (the tree's size, `D`). Such a job's end leaves its tree to
 * be stamped with its expiry; any other job's end commit is all its items.
 */
export function hasTreeItems(job: JobRecord): boolean {
  return job.steps.some((step) => step.children !== undefined || step.job !== undefined);
}

/**
 * The plain attributes of a job's head item: what filters, listings (gsi1: top-level jobs by
 * workflow and status; retention reads it too) and TTL read. With a retention, a finished top-level
 * job's head carries `expiresAt` and `tt` (its tree expires by TTL: the sweep leaves it), and one
 * whose tree holds more items waits in gsi2 (`TTL#<shard>`, by end time) for them to be stamped
 * (ttl-stamps.ts). A fan-out child's head carries its tree's horizon (`treeHorizon`, from the time
 * of the write that creates it), which later writes keep (see `headUpdate`).
 */
export function headAttributes(job: JobRecord, retentionSeconds: number | undefined): Item {
  const attrs: Item = { rev: N(job.rev), st: S(job.status), wf: S(job.workflow), ca: N(job.createdAt) };
  if (job.endedAt !== undefined) attrs.ea = N(job.endedAt);
  if (job.vhost !== null) attrs.vh = S(job.vhost);
  if (job.parent) attrs.par = S(job.parent.id);
  if (job.parent === null) {
    // Listed by the listed status (`waiting`: waiting for someone; `pending`: not started).
    attrs.gsi1pk = S(gsi.listing(job.workflow, listedStatusOf(job), shardOf(job.id, SHARDS.listing)));
    attrs.gsi1sk = S(gsi.created(job.createdAt, job.id));
  }
  if (job.parent && retentionSeconds !== undefined)
    attrs.expiresAt = N(treeHorizon(job.updatedAt, retentionSeconds));
  const expiresAt = expiryOf(job, retentionSeconds);
  if (expiresAt !== undefined) {
    attrs.expiresAt = N(expiresAt);
    attrs.tt = N(1);
    if (hasTreeItems(job)) {
      attrs.gsi2pk = S(gsi.unstamped(shardOf(job.id, SHARDS.unstamped)));
      attrs.gsi2sk = S(gsi.ended(job.endedAt ?? job.updatedAt, job.id));
    }
  }
  return attrs;
}

export interface HeadObx {
  /** Replace the job's unsent-request ids with these. */
  set?: readonly string[];
  /** Add these ids. */
  add?: readonly string[];
}

/** What a head update does to its inline entries (inline-outbox.ts) and to its place in gsi3. */
export interface HeadInline {
  /** `o_<short id>` attributes to set. */
  add?: Item;
  /** Short ids of inline entries to remove. */
  drop?: readonly string[];
  /** The short ids the head names in `oi` after this write, when it changes them. */
  ids?: readonly string[];
  /**
   * gsi3: enter it under this key (a head already in it keeps its own, which is no later than its
   * entries), or leave it (the head holds no inline entry after this write); unset: stay as it is.
   */
  index?: { enter: { pk: string; sk: string } } | 'leave';
}

export interface HeadUpdate {
  Key: Key;
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Item;
}

/**
 * The conditional update of a job's head: every attribute set anew or removed (a pending item's
 * versions too), so the item reads exactly as this revision; created only when absent (`expectedRev`
 * 0), else only from `expectedRev` and while no retention sweep has marked it (`del`).
 */
export function headUpdate(
  job: JobRecord,
  json: Item,
  expectedRev: number,
  obx: HeadObx,
  retentionSeconds: number | undefined,
  inline: HeadInline = {},
): HeadUpdate {
  const values: Item = {};
  const names: Record<string, string> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  const set = { ...headAttributes(job, retentionSeconds), ...json };
  HEAD_ATTRIBUTES.forEach((name, n) => {
    const value = set[name];
    const childExpiry = name === 'expiresAt' && job.parent !== null;
    // A child's head keeps the expiry it has: its horizon, or what a stamp or a keep-alive raised it to.
    if (childExpiry && !value) return;
    names[`#a${n}`] = name;
    if (childExpiry && value) {
      values[`:a${n}`] = value;
      sets.push(`#a${n} = if_not_exists(#a${n}, :a${n})`);
    } else if (value) {
      values[`:a${n}`] = value;
      sets.push(`#a${n} = :a${n}`);
    } else {
      removes.push(`#a${n}`);
    }
  });
  let add = '';
  if (obx.set !== undefined || obx.add?.length) names['#obx'] = 'obx';
  if (obx.set !== undefined) {
    if (obx.set.length) {
      values[':obx'] = { SS: [...obx.set] };
      sets.push('#obx = :obx');
    } else {
      removes.push('#obx');
    }
  } else if (obx.add?.length) {
    values[':obx'] = { SS: [...new Set(obx.add)] };
    add = ' ADD #obx :obx';
  }
  Object.entries(inline.add ?? {}).forEach(([name, value], n) => {
    names[`#i${n}`] = name;
    values[`:i${n}`] = value;
    sets.push(`#i${n} = :i${n}`);
  });
  (inline.drop ?? []).forEach((id, n) => {
    names[`#d${n}`] = inlineAttribute(id);
    removes.push(`#d${n}`);
  });
  if (inline.index === 'leave' || inline.ids !== undefined) names['#oi'] = 'oi';
  if (inline.index === 'leave' || inline.ids?.length === 0) removes.push('#oi');
  else if (inline.ids !== undefined) {
    values[':oi'] = { SS: [...new Set(inline.ids)] };
    sets.push('#oi = :oi');
  }
  if (inline.index) {
    names['#ipk'] = INLINE_INDEX.partitionKey;
    names['#isk'] = INLINE_INDEX.sortKey;
    if (inline.index === 'leave') removes.push('#ipk', '#isk');
    else {
      values[':ipk'] = S(inline.index.enter.pk);
      values[':isk'] = S(inline.index.enter.sk);
      sets.push('#ipk = if_not_exists(#ipk, :ipk)', '#isk = if_not_exists(#isk, :isk)');
    }
  }
  let condition = 'attribute_not_exists(pk)';
  if (expectedRev > 0) {
    names['#del'] = 'del';
    values[':expected'] = N(expectedRev);
    condition = '#a0 = :expected AND attribute_not_exists(#del)';
  }
  return {
    Key: keys.head(job.id),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${add}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** A whole committed head item (a job created by another job's commit). */
export function headItem(
  job: JobRecord,
  json: Item,
  obx: readonly string[],
  retentionSeconds: number | undefined,
): Item {
  const item: Item = { ...keys.head(job.id), ...headAttributes(job, retentionSeconds), ...json };
  if (obx.length) item.obx = { SS: [...new Set(obx)] };
  return item;
}

/** What a commit needs to know of the revision it replaces. */
export interface HeadMeta {
  rev: number;
  status: JobStatus;
  chunk?: ChunkRef;
  /** Ids of request entries this job may still have in the outbox. */
  obx: string[];
  /** The entries its head may still hold inline, by short id (inline-outbox.ts). */
  held: Record<string, HeldEntry>;
}

export function headMeta(item: Item): HeadMeta {
  return {
    rev: num(item, 'rev') ?? 0,
    status: (str(item, 'st') ?? 'waiting') as JobStatus,
    chunk: chunkRefOf(item),
    obx: item.obx?.SS ?? [],
    held: heldEntries(item),
  };
}

const MAX_CACHED_HEADS = 10_000;

/**
 * The last revision of each job this process read or wrote. The manager reads a job right before
 * committing it, so a commit finds here what it would otherwise read again (the old status for the
 * job counts, the unsent requests to drop, the chunks to clean up). A revision's facts never change,
 * so an entry is used only for exactly that revision.
 */
export class HeadCache {
  private readonly heads = new Map<string, HeadMeta>();

  get(id: string, rev: number): HeadMeta | undefined {
    const meta = this.heads.get(id);
    return meta?.rev === rev ? meta : undefined;
  }

  set(id: string, meta: HeadMeta): void {
    this.heads.delete(id);
    if (this.heads.size >= MAX_CACHED_HEADS) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
    this.heads.set(id, meta);
  }

  delete(id: string): void {
    this.heads.delete(id);
  }

  /** Inline entries removed as done leave the head without changing its revision. */
  forgetInline(id: string, done: readonly string[]): void {
    const meta = this.heads.get(id);
    if (meta) for (const short of done) delete meta.held[short];
  }
}
