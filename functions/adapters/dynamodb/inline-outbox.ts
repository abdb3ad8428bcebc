import {
  correlationIdOf,
  type EveryField,
  type JsonObject,
  type OutboxEntry,
  type StepRequest,
} from '../../../engine/index.js';
import { jobIdOf, keys, N, pad, S, SHARDS, shardOf, time } from './items.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item } from './table.js';
import { SWITCHYARD_TABLE } from './table-schema.js';

// Outbox entries kept in their job's head: see README.md, "The outbox".

/** An inline entry above this many bytes of JSON would make every write of its head dearer than an item of its own. */
const MAX_INLINE_BYTES = 2_000;
/** Inline entries of one commit together. */
const MAX_INLINE_TOTAL = 3_000;

export const INLINE_INDEX = SWITCHYARD_TABLE.indexes.gsi3;

/**
 * An inline entry's id in its head: `r` (a request) or `f` (a follow-up), then the id, whose start
 * (the engine's ids start with the job's id, which the head already says) is `~`, or `=` and the
 * whole id.
 */
export function shortId(jobId: string, entry: Pick<OutboxEntry, 'id' | 'kind'>): string {
  const kind = entry.kind === 'request' ? 'r' : 'f';
  const { id } = entry;
  return id.startsWith(`${jobId}:`) ? `${kind}~${id.slice(jobId.length + 1)}` : `${kind}=${id}`;
}
export const fullId = (jobId: string, short: string): string =>
  short[1] === '~' ? `${jobId}:${short.slice(2)}` : short.slice(2);
const isRequest = (short: string): boolean => short.startsWith('r');

export const inlineAttribute = (short: string): string => `o_${short}`;
export const inlinePartition = (shard: number): string => `OBX#${shard}`;

/** The sort of an outbox entry in a merged listing (the same for items and inline entries). */
export const entrySort = (entry: OutboxEntry, seq: number): string =>
  `${time(entry.createdAt)}#${pad(seq, 6)}#${entry.id}`;

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;
type FollowUpEntry = Extract<OutboxEntry, { kind: 'followUp' }>;

/**
 * A request's fields under short names. Every key is required (a value may be undefined, which
 * JSON leaves out), so `compactRequest` cannot leave one unsaid: with `expand`, which names every
 * field of StepRequest, a field added to StepRequest fails tsc until it is kept here.
 */
interface CompactRequest {
  s: string;
  q: string;
  v: string | null;
  a: number;
  b: JsonObject;
  /** The correlation id, when it is not `<job id>:<step>`. */
  c: string | undefined;
  d: number | undefined;
  /** The secret references (never values) of its params. */
  k: StepRequest['secrets'];
}

/** What an entry holds that its head does not already say: its time, then a request's fields or the follow-up (`f`). */
type Compact = { at: number; f?: FollowUpEntry['followUp'] } & Partial<CompactRequest>;

function compactRequest(jobId: string, request: StepRequest): CompactRequest {
  return {
    s: request.step,
    q: request.queue,
    v: request.vhost,
    a: request.attempt,
    b: request.body,
    c: request.correlationId === correlationIdOf(jobId, request.step) ? undefined : request.correlationId,
    d: request.deadline,
    k: request.secrets,
  };
}

function compact(entry: OutboxEntry): Compact {
  if (entry.kind === 'followUp') return { at: entry.createdAt, f: entry.followUp };
  return { at: entry.createdAt, ...compactRequest(entry.jobId, entry.request) };
}

/**
 * An inline entry back from its head: its id and kind from its name, its job from the head. Each
 * literal names every field of its type (`EveryField`): a field added to an outbox entry or a
 * request fails tsc here until it is read back.
 */
function expand(jobId: string, short: string, value: Compact): OutboxEntry {
  const id = fullId(jobId, short);
  if (!isRequest(short)) {
    return {
      id,
      kind: 'followUp',
      jobId,
      createdAt: value.at,
      followUp: value.f as FollowUpEntry['followUp'],
    } satisfies EveryField<FollowUpEntry>;
  }
  const step = value.s as string;
  const request = {
    jobId,
    step,
    queue: value.q as string,
    vhost: value.v ?? null,
    correlationId: value.c ?? correlationIdOf(jobId, step),
    attempt: value.a as number,
    body: value.b as JsonObject,
    deadline: value.d,
    secrets: value.k,
  } satisfies EveryField<StepRequest>;
  return {
    id,
    kind: 'request',
    jobId,
    createdAt: value.at,
    request,
  } satisfies EveryField<RequestEntry>;
}

export interface InlineEntry {
  entry: OutboxEntry;
  /** Its id in the head (see shortId). */
  short: string;
  text: string;
  sort: string;
}

export interface InlinePlan {
  entries: InlineEntry[];
  /** The head's gsi3 key while it holds them. */
  index: { pk: string; sk: string };
}

/** What a head holds of one inline entry: its bytes, and a request's step and attempt. */
export interface HeldEntry {
  bytes: number;
  request?: { step: string; attempt: number };
}

/**
 * Which of a commit's outbox entries go in the job's head (see above), with their positions in the
 * commit (`seq`, as outbox items number them). `room`: how many bytes of inline entries the head
 * may take on besides those it keeps (undefined: unknown, none).
 */
export function planInline(
  jobId: string,
  outbox: readonly OutboxEntry[],
  room: number | undefined,
  dropUnsent: boolean,
): InlinePlan | undefined {
  if (room === undefined || dropUnsent || !outbox.length) return undefined;
  const entries: InlineEntry[] = [];
  let total = 0;
  const at = outbox[0]?.createdAt;
  outbox.forEach((entry, seq) => {
    if (entry.jobId !== jobId || entry.createdAt !== at) return;
    if (entry.kind === 'request' && entry.request.jobId !== jobId) return;
    const text = JSON.stringify(compact(entry));
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_INLINE_BYTES || total + bytes > Math.min(MAX_INLINE_TOTAL, room)) return;
    total += bytes;
    entries.push({ entry, short: shortId(jobId, entry), text, sort: entrySort(entry, seq) });
  });
  const first = entries[0];
  if (!first) return undefined;
  return { entries, index: inlineIndexKey(jobId, first.entry.createdAt, outbox.indexOf(first.entry)) };
}

/** What the head holds of a planned entry once written. */
export const heldOf = ({ entry, short, text }: InlineEntry): HeldEntry => ({
  bytes: heldBytes(short, SEQ_WIDTH + Buffer.byteLength(text)),
  ...(entry.kind === 'request'
    ? { request: { step: entry.request.step, attempt: entry.request.attempt } }
    : {}),
});

const heldBytes = (short: string, valueBytes: number): number =>
  inlineAttribute(short).length + valueBytes + short.length;

/** The inline entries a head item holds (an id in `oi` without its attribute holds none). */
export function heldEntries(head: Item | undefined): Record<string, HeldEntry> {
  const held: Record<string, HeldEntry> = {};
  for (const short of head?.oi?.SS ?? []) {
    const value = head?.[inlineAttribute(short)]?.S;
    if (value === undefined) continue;
    const entry: HeldEntry = { bytes: heldBytes(short, Buffer.byteLength(value)) };
    if (isRequest(short)) {
      const { s, a } = JSON.parse(value.slice(SEQ_WIDTH)) as Compact;
      entry.request = { step: s as string, attempt: a as number };
    }
    held[short] = entry;
  }
  return held;
}

/** Inline entries a head holds, in bytes at most (besides the job itself): its writes stay near a write unit. */
export const MAX_HELD_BYTES = 3_000;

/** A head's gsi3 key for inline entries from time `at` on (the first at position `seq` of its commit). */
export const inlineIndexKey = (jobId: string, at: number, seq = 0): { pk: string; sk: string } => ({
  pk: inlinePartition(shardOf(jobId, SHARDS.outbox)),
  sk: `${time(at)}#${pad(seq, 6)}#${jobId}`,
});

/** The inline requests a head item holds, oldest first, each with its sort. */
export function inlineEntries(head: Item): { sort: string; short: string; entry: OutboxEntry }[] {
  const found: { sort: string; short: string; entry: OutboxEntry }[] = [];
  const jobId = jobIdOf(head);
  for (const short of head.oi?.SS ?? []) {
    const value = head[inlineAttribute(short)]?.S;
    if (value === undefined) continue;
    const entry = expand(jobId, short, JSON.parse(value.slice(SEQ_WIDTH)) as Compact);
    found.push({ sort: entrySort(entry, Number(value.slice(0, SEQ_WIDTH))), short, entry });
  }
  return found.sort((a, b) => (a.sort < b.sort ? -1 : 1));
}

/** Each inline request is stored as its position in its commit (6 digits) then its compact JSON. */
const SEQ_WIDTH = 6;

/** The attributes a commit sets for its inline requests (besides adding their short ids to `oi`). */
export function inlineAttributes(plan: InlinePlan): Item {
  const attrs: Item = {};
  for (const { short, text, sort } of plan.entries)
    attrs[inlineAttribute(short)] = S(`${sort.split('#')[1]}${text}`);
  return attrs;
}

/**
 * Removes done inline entries from a job's head (one update): follow-ups done, requests recovery
 * sent again or found in the sent log. The head stays in gsi3: its end, or the minute's recovery
 * sweep when it finds the head holding nothing (leaveInlineIndex), takes it out. A head that is
 * gone is left gone.
 */
export async function ackInline(
  table: DynamoDbTable,
  jobId: string,
  shorts: readonly string[],
): Promise<void> {
  const ids = [...new Set(shorts)];
  const names: Record<string, string> = { '#oi': 'oi' };
  const removes: string[] = [];
  ids.forEach((id, n) => {
    names[`#o${n}`] = inlineAttribute(id);
    removes.push(`#o${n}`);
  });
  try {
    await table.update({
      Key: keys.head(jobId),
      UpdateExpression: `REMOVE ${removes.join(', ')} DELETE #oi :ids`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':ids': { SS: ids } },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * Takes a head whose inline entries are all sent (recovery found them in the sent log) out of gsi3,
 * with them, unless a commit changed them since it was read (then it keeps its key, which is still as
 * read) or it left and came back (another key). `oi` may name ids whose attributes are gone (a
 * commit that did not know another process had removed them): they go too.
 */
export async function leaveInlineIndex(table: DynamoDbTable, head: Item): Promise<void> {
  const sortKey = head[INLINE_INDEX.sortKey];
  if (!sortKey || !head.pk) return;
  const named = head.oi?.SS ?? [];
  const names: Record<string, string> = {
    '#oi': 'oi',
    '#ipk': INLINE_INDEX.partitionKey,
    '#isk': INLINE_INDEX.sortKey,
  };
  const values: Item = { ':isk': sortKey };
  const removes = named.map((short, n) => {
    names[`#s${n}`] = inlineAttribute(short);
    values[`:s${n}`] = S(short);
    return `#s${n}`;
  });
  if (named.length) values[':n'] = N(named.length);
  const unchanged = named.length
    ? `size(#oi) = :n AND ${named.map((_, n) => `contains(#oi, :s${n})`).join(' AND ')}`
    : 'attribute_not_exists(#oi)';
  try {
    await table.update({
      Key: { pk: head.pk, sk: S('J') },
      UpdateExpression: `REMOVE ${[...removes, '#oi', '#ipk', '#isk'].join(', ')}`,
      ConditionExpression: `${unchanged} AND #isk = :isk`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

const MAX_REMEMBERED = 100_000;

/**
 * Where the inline entries this process committed or recovered live (the port acknowledges entries
 * by id only), and when the requests it committed were created (sent-log.ts logs those
 * sent). An id it does not know is taken for an outbox item: at worst a request kept inline is sent
 * again by a later recovery, which then knows it.
 */
export class InlineRequests {
  private readonly entries = new Map<string, { jobId: string; short: string; createdAt?: number }>();

  /** `entries`: ids as the job's head names them; `createdAt` for the requests this process committed. */
  note(jobId: string, entries: readonly { short: string; createdAt?: number }[]): void {
    if (this.entries.size + entries.length > MAX_REMEMBERED) this.entries.clear();
    for (const { short, createdAt } of entries)
      this.entries.set(
        fullId(jobId, short),
        createdAt === undefined ? { jobId, short } : { jobId, short, createdAt },
      );
  }

  /**
   * Splits acknowledged ids into requests this process committed (to log as sent), other inline
   * entries (short ids by job, to remove from their heads) and outbox items, forgetting the first two.
   */
  take(ids: readonly string[]): {
    logged: { id: string; createdAt: number }[];
    byJob: Map<string, string[]>;
    items: string[];
  } {
    const logged: { id: string; createdAt: number }[] = [];
    const byJob = new Map<string, string[]>();
    const items: string[] = [];
    for (const id of ids) {
      const known = this.entries.get(id);
      if (known === undefined) {
        items.push(id);
        continue;
      }
      this.entries.delete(id);
      if (known.createdAt !== undefined && isRequest(known.short)) {
        logged.push({ id, createdAt: known.createdAt });
        continue;
      }
      const list = byJob.get(known.jobId);
      if (list) list.push(known.short);
      else byJob.set(known.jobId, [known.short]);
    }
    return { logged, byJob, items };
  }
}
