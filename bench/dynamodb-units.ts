import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { SWITCHYARD_TABLE } from '../functions/adapters/dynamodb/table-schema.js';

/*
 * DynamoDB's billing rules for writes, computed from item sizes, because DynamoDB Local's
 * ConsumedCapacity for TransactWriteItems is wrong (one small Put reports 4 units, two report 4 too;
 * AWS bills 2 per KB per item). Reads use the ConsumedCapacity the emulator returns, which matches
 * AWS's rules (0.5 unit per 4 KB eventually consistent, 1 strongly consistent).
 *
 * Rules (AWS, "Read/write capacity mode" and "Item sizes and formats" in the DynamoDB guide):
 * - an item's size is the sum of its attribute names' and values' sizes: strings and binaries by
 *   their bytes, numbers (significant digits / 2) + 1, booleans and null 1, lists and maps
 *   3 + their elements + 1 per element;
 * - a standard write costs 1 write request unit per KB (rounded up) of the larger of the item
 *   before and after; a transactional write costs 2 per KB;
 * - each global secondary index the item is in before or after costs its own write: an update of
 *   the index entry (same index key), or a delete and a put (key changed), at 1 unit per KB of the
 *   entry (the projected attributes: keys only, some, or the whole item); an update that changes
 *   neither the index key nor a projected attribute writes nothing to the index.
 */

export type Item = Record<string, AttributeValue>;

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L) return 3 + value.L.reduce((sum, v) => sum + valueSize(v) + 1, 0);
  if (value.M)
    return (
      3 + Object.entries(value.M).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + valueSize(v) + 1, 0)
    );
  return 0;
}

function numberSize(text: string): number {
  const digits = text
    .replace(/^-/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** An item's size in bytes as DynamoDB counts it. */
export function itemSize(item: Item | undefined): number {
  if (!item) return 0;
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value),
    0,
  );
}

const kbUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

interface Index {
  partitionKey: string;
  sortKey: string;
  projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  include?: readonly string[];
}
const INDEXES: readonly Index[] = Object.values(SWITCHYARD_TABLE.indexes);

function indexKey(item: Item | undefined, index: Index): string | undefined {
  const pk = item?.[index.partitionKey]?.S;
  const sk = item?.[index.sortKey]?.S;
  return pk !== undefined && sk !== undefined ? `${pk}\u0000${sk}` : undefined;
}

/** The attributes an index entry holds: the table's and the index's keys, and what it projects. */
function projected(item: Item | undefined, index: Index): Item | undefined {
  if (!item || index.projection === 'ALL') return item;
  const names = [
    SWITCHYARD_TABLE.partitionKey,
    SWITCHYARD_TABLE.sortKey,
    index.partitionKey,
    index.sortKey,
    ...(index.projection === 'INCLUDE' ? (index.include ?? []) : []),
  ];
  const entry: Item = {};
  for (const name of names) if (item[name]) entry[name] = item[name] as Item[string];
  return entry;
}

const sameValues = (a: Item | undefined, b: Item | undefined): boolean =>
  JSON.stringify(Object.entries(a ?? {}).sort(([x], [y]) => (x < y ? -1 : 1))) ===
  JSON.stringify(Object.entries(b ?? {}).sort(([x], [y]) => (x < y ? -1 : 1)));

export interface WriteUnits {
  table: number;
  indexes: number;
}

/**
 * Write request units of one item write, from the item before and after (undefined: absent).
 * `transactional` doubles the table's part.
 */
export function writeUnits(
  before: Item | undefined,
  after: Item | undefined,
  transactional: boolean,
): WriteUnits {
  const oldSize = itemSize(before);
  const newSize = itemSize(after);
  const table = kbUnits(Math.max(oldSize, newSize)) * (transactional ? 2 : 1);
  let indexes = 0;
  for (const index of INDEXES) {
    const oldKey = indexKey(before, index);
    const newKey = indexKey(after, index);
    if (oldKey === undefined && newKey === undefined) continue;
    const oldEntry = oldKey === undefined ? undefined : projected(before, index);
    const newEntry = newKey === undefined ? undefined : projected(after, index);
    if (oldKey !== undefined && newKey !== undefined && oldKey === newKey) {
      if (!sameValues(oldEntry, newEntry))
        indexes += kbUnits(Math.max(itemSize(oldEntry), itemSize(newEntry)));
    } else
      indexes +=
        (oldKey !== undefined ? kbUnits(itemSize(oldEntry)) : 0) +
        (newKey !== undefined ? kbUnits(itemSize(newEntry)) : 0);
  }
  return { table, indexes };
}
