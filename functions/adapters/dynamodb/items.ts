import { gunzipSync, gzipSync } from 'node:zlib';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type Item, type Key, keyOf } from './table.js';

/**
 * Keys and encodings of every item the DynamoDB store writes (the table is described in
 * README.md). Partition keys start with a type tag; numbers in sort keys are zero-padded so
 * that string order is number order.
 */

/** Shards of the partitions that every job or message of one kind would otherwise write to. */
export const SHARDS = {
  /** Top-level job listing per workflow and status (gsi1). */
  listing: 4,
  /** Child listing per workflow (gsi1): one entry per bucket of 1,000 children. */
  childListing: 16,
  /** Outbox by creation time (gsi2), also its groups of children's requests, heads with inline entries (gsi3) and fan-out watchers (gsi3). */
  outbox: 16,
  /** Timers by due time (gsi2): one per child when the task's first step has a timeout. */
  timers: 16,
  /** Job counts per workflow and status. */
  counts: 8,
  /** Ended top-level jobs whose trees wait for their expiry stamp (gsi2; ttl-stamps.ts). */
  unstamped: 16,
} as const;

/** Children index entries per partition: a large fan-out writes its entries to many partitions. */
export const CHILD_BUCKET = 1_000;

export const pad = (value: number, width: number): string =>
  String(Math.max(0, Math.trunc(value))).padStart(width, '0');
export const time = (ms: number): string => pad(ms, 15);

/** FNV-1a: a stable, cheap hash to spread ids over shards. */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

export const keys = {
  jobPk: (id: string) => `JOB#${id}`,
  head: (id: string): Key => keyOf(`JOB#${id}`, 'J'),
  chunk: (pk: string, token: string, n: number): Key => keyOf(pk, `C#${token}#${pad(n, 4)}`),
  /** The commit with this token stored its job: its pending writes are real. */
  marker: (jobId: string, token: string): Key => keyOf(`JOB#${jobId}`, `K#${token}`),
  /** The job has children of this step (for deleting a tree). */
  fanStep: (jobId: string, step: string): Key => keyOf(`JOB#${jobId}`, `S#${step}`),
  timer: (jobId: string, step: string | null): Key => keyOf(`JOB#${jobId}`, `T#${step ?? ''}`),
  childrenPk: (parentId: string, step: string, bucket: number) =>
    `KIDS#${parentId}#${step}#${pad(bucket, 6)}`,
  /** A pack of up to 20 children's ids from `first` on, written by the commit with `token` (child-packs.ts). */
  childPackSk: (first: number, token: string) => `P#${pad(first, 9)}#${token}`,
  /** A bucket's listing entry. */
  childListing: () => 'L',
  fanPk: (parentId: string, step: string) => `FAN#${parentId}#${step}`,
  fanShard: (parentId: string, step: string, shard: number): Key =>
    keyOf(`FAN#${parentId}#${step}`, pad(shard, 3)),
  outbox: (id: string): Key => keyOf(`OUT#${id}`, 'O'),
  /** Requests for many created children (outbox-groups.ts), named by its first entry. */
  outboxGroup: (id: string): Key => keyOf(`OUT#${id}`, 'G'),
  counts: (shard: number, workflow: string): Key => keyOf(`CNT#${pad(shard, 2)}`, workflow),
  countsPk: (shard: number) => `CNT#${pad(shard, 2)}`,
  workflowRegistryPk: () => 'WFS',
  workflowRegistry: (name: string): Key => keyOf('WFS', name),
  workflowVersion: (name: string, version: number): Key => keyOf(`WF#${name}`, pad(version, 9)),
  ping: (): Key => keyOf('PING', 'PING'),
  tokensPk: () => 'TOKENS',
  token: (id: string): Key => keyOf('TOKENS', id),
  namespaceSettingsPk: () => 'NAMESPACES',
  namespaceSettings: (namespace: string): Key => keyOf('NAMESPACES', namespace),
  managerKey: (name: string): Key => keyOf('KEYS', name),
  auditPk: (namespace: string) => `AUDIT#${namespace}`,
  /** Until when jobs may have been finished by code older than TTL retention (ttl-stamps.ts). */
  legacyCutoff: (): Key => keyOf('RET', 'legacy'),
  audit: (namespace: string, id: string): Key => keyOf(`AUDIT#${namespace}`, id),
  delivery: (id: string): Key => keyOf(`DLV#${id}`, 'D'),
};

export const gsi = {
  listing: (workflow: string, status: string, shard: number) => `L#${workflow}#${status}#${shard}`,
  childListing: (workflow: string, shard: number) => `CL#${workflow}#${shard}`,
  created: (createdAt: number, id: string) => `${time(createdAt)}#${id}`,
  childBucket: (createdAt: number, parentId: string, step: string, bucket: number) =>
    `${time(createdAt)}#${parentId}#${step}#${pad(bucket, 6)}`,
  outbox: (shard: number) => `OBX#${shard}`,
  timers: (shard: number) => `TIM#${shard}`,
  unstamped: (shard: number) => `TTL#${shard}`,
  ended: (endedAt: number, id: string) => `${time(endedAt)}#${id}`,
};

// Attribute values.
export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const str = (item: Item | undefined, name: string): string | undefined => item?.[name]?.S;
/** The id of the job whose head (or other `JOB#` item) this is. */
export const jobIdOf = (item: Item): string => (str(item, 'pk') ?? '').slice('JOB#'.length);
export const num = (item: Item | undefined, name: string): number | undefined => {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
};

/**
 * JSON below this many bytes is stored as text; above it, compressed. A write unit is 1 KB of the
 * whole item: a job head's JSON passes a few hundred bytes after its first steps, and compressed
 * (to about half) it keeps the head, with its other attributes and inline requests, under 1 KB.
 */
const COMPRESS_FROM = 400;
/** Pieces of a large value, each its own item, far under DynamoDB's 400 KB per item. */
export const CHUNK_BYTES = 300_000;

export interface ChunkRef {
  /** The partition holding the chunks. */
  pk: string;
  token: string;
  count: number;
}

/**
 * A JSON value as item attributes: `j` (text), `z` (gzip), or `ck`/`cn`/`cp` (gzip cut into `cn`
 * chunk items in partition `cp`, named by the token `ck`). `chunks` are the chunk items to write
 * before the item that points at them.
 */
export interface EncodedJson {
  attrs: Item;
  chunks: Item[];
  /** Bytes the attributes take (for staying under item and transaction limits). */
  bytes: number;
}

export function encodeJson(
  value: unknown,
  inlineLimit: number,
  chunkPk: string,
  chunkToken: string,
  chunkExtra: Item = {},
): EncodedJson {
  const text = JSON.stringify(value);
  const textBytes = Buffer.byteLength(text);
  if (textBytes < COMPRESS_FROM) return { attrs: { j: S(text) }, chunks: [], bytes: textBytes };
  const zipped = gzipSync(text);
  if (zipped.length <= inlineLimit) return { attrs: { z: { B: zipped } }, chunks: [], bytes: zipped.length };
  const chunks: Item[] = [];
  for (let start = 0, n = 0; start < zipped.length; start += CHUNK_BYTES, n++) {
    chunks.push({
      ...keys.chunk(chunkPk, chunkToken, n),
      b: { B: zipped.subarray(start, start + CHUNK_BYTES) },
      ...chunkExtra,
    });
  }
  return { attrs: { ck: S(chunkToken), cn: N(chunks.length), cp: S(chunkPk) }, chunks, bytes: 128 };
}

/** The names `encodeJson` may set, for removing the ones a new encoding does not use. */
export const JSON_ATTRIBUTES = ['j', 'z', 'ck', 'cn', 'cp'] as const;

export function chunkRefOf(attrs: Item | undefined): ChunkRef | undefined {
  const token = str(attrs, 'ck');
  const count = num(attrs, 'cn');
  const pk = str(attrs, 'cp') ?? str(attrs, 'pk');
  return token !== undefined && count !== undefined && pk !== undefined ? { pk, token, count } : undefined;
}

export function chunkKeys(ref: ChunkRef): Key[] {
  return Array.from({ length: ref.count }, (_, n) => keys.chunk(ref.pk, ref.token, n));
}

/** Decodes the value; for a chunked one, `readChunks` fetches the pieces. */
export async function decodeJson<T>(attrs: Item, readChunks: (keys: Key[]) => Promise<Item[]>): Promise<T> {
  const text = attrs.j?.S;
  if (text !== undefined) return JSON.parse(text) as T;
  const zipped = attrs.z?.B;
  if (zipped) return JSON.parse(gunzipSync(zipped).toString('utf8')) as T;
  const ref = chunkRefOf(attrs);
  if (!ref) throw new Error(`item ${attrs.pk?.S}/${attrs.sk?.S} holds no JSON value`);
  const wanted = chunkKeys(ref);
  const found = new Map((await readChunks(wanted)).map((item) => [item.sk?.S, item.b?.B]));
  const pieces = wanted.map((key) => {
    const piece = found.get(key.sk.S);
    if (!piece) throw new Error(`item ${attrs.pk?.S}/${attrs.sk?.S} misses its chunk ${key.sk.S}`);
    return piece;
  });
  return JSON.parse(gunzipSync(Buffer.concat(pieces)).toString('utf8')) as T;
}

/** A rough upper bound of an item's stored size (names plus values), for the transaction limit. */
export function itemBytes(item: Item): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += name.length + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return value.N.length;
  if (value.B !== undefined) return value.B.length;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.M !== undefined) return itemBytes(value.M) + 3;
  if (value.L !== undefined) return value.L.reduce((sum, v) => sum + valueBytes(v) + 1, 3);
  return 1;
}
