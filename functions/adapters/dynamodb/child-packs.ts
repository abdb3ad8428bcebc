import type { JobRecord } from '../../../engine/index.js';
import { CHILD_BUCKET, keys, N, num, S, str } from './items.js';
import type { DynamoDbTable, Item } from './table.js';

/**
 * A fan-out's children index, packed: one item names up to `CHILD_PACK` children of one step,
 * `KIDS#<parent>#<step>#<bucket>` / `P#<first index>#<commit token>`, with `ix` (the first index) and
 * `ids` (the children's ids by index, "" for an index the commit did not create). Twenty UUIDs and the
 * keys stay under a write unit's 1 KB, so the index costs a write unit for twenty children where one
 * entry a child cost one each (and its retention stamp as many again).
 *
 * The token keeps the packs of two commits apart: two commits of one job from the same revision both
 * write theirs, and only the children whose heads the winner committed are read back (readers check
 * each head's link to its parent, step and index). Entries of older code, `<index>#<id>` with `ix` and
 * `id`, are read beside packs.
 */
export const CHILD_PACK = 20;

export interface ChildEntry {
  index: number;
  id: string;
}

/** The packs that index `children` (created by one commit with `token`), in index order. */
export function childPacks(children: readonly JobRecord[], token: string): Item[] {
  const packs = new Map<string, { pk: string; first: number; ids: string[] }>();
  for (const child of children) {
    const link = child.parent;
    if (!link) continue;
    const first = link.index - (link.index % CHILD_PACK);
    const pk = keys.childrenPk(link.id, link.step, Math.floor(link.index / CHILD_BUCKET));
    const name = `${pk}\u0000${first}`;
    let pack = packs.get(name);
    if (!pack) {
      pack = { pk, first, ids: [] };
      packs.set(name, pack);
    }
    pack.ids[link.index - first] = child.id;
  }
  return [...packs.values()].map(({ pk, first, ids }) => ({
    pk: S(pk),
    sk: S(keys.childPackSk(first, token)),
    ix: N(first),
    ids: { L: Array.from(ids, (id) => S(id ?? '')) },
  }));
}

/** The children an index item names: a pack's, an older entry's one, none for a bucket's listing. */
export function entriesOf(item: Item): ChildEntry[] {
  const first = num(item, 'ix');
  if (first === undefined) return [];
  const ids = item.ids?.L;
  if (!ids) {
    const id = str(item, 'id');
    return id === undefined ? [] : [{ index: first, id }];
  }
  const entries: ChildEntry[] = [];
  ids.forEach((value, offset) => {
    if (value.S) entries.push({ index: first + offset, id: value.S });
  });
  return entries;
}

/** Every item of one bucket partition (packs, older entries, the listing), strongly consistent. */
export const bucketItems = (table: DynamoDbTable, pk: string, projection: string): Promise<Item[]> =>
  table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': S(pk) },
    ProjectionExpression: projection,
    ConsistentRead: true,
  });

/** Every child one bucket partition names (strongly consistent), in index order, each once. */
export async function readBucket(table: DynamoDbTable, pk: string): Promise<ChildEntry[]> {
  const entries = (await bucketItems(table, pk, 'ix, id, ids'))
    .flatMap(entriesOf)
    .sort((a, b) => a.index - b.index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Two commits' packs may name the same child (ids are derived from the index): it is listed once.
  return entries.filter(
    (entry, n) => n === 0 || entry.index !== entries[n - 1]?.index || entry.id !== entries[n - 1]?.id,
  );
}
