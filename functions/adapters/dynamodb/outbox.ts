import type { OutboxEntry, OutboxPage, Timer } from '../../../engine/index.js';
import { INLINE_INDEX, inlinePartition, leaveInlineIndex } from './inline-outbox.js';
import { type InlineRecovery, recoverable } from './inline-recovery.js';
import { decodeJson, gsi, jobIdOf, keys, S, SHARDS, str, time } from './items.js';
import { type Candidate, heldUntilRead, MergeSource, mergePage, pageSizeFor } from './merge.js';
import type { PendingWrites } from './pending.js';
import { type DynamoDbTable, forEachLimit, type Item, type Key } from './table.js';

const OUTBOX_CURSOR = /^\d{15}#\d{6}#(.+)$/s;

/**
 * Outbox entries not yet acknowledged, oldest first: gsi2 partitions `OBX#<shard>` sorted by
 * `<createdAt>#<seq>#<id>`, merged with the inline entries of the heads in gsi3 (less the requests
 * the sent log names: inline-recovery.ts) and the caller's further sources (young heads,
 * groups, watchers); the cursor is the last entry's sort key. The index is eventually consistent,
 * which recovery tolerates (an entry written a moment ago is being sent by its writer).
 */
export async function pendingOutbox(
  table: DynamoDbTable,
  pending: PendingWrites,
  page: { limit: number; cursor?: string; createdBefore?: number },
  inline: Omit<InlineRecovery, 'cursor' | 'createdBefore'>,
  /** Further sources merged in (groups of children's requests, fan-out watchers), given the cursor checked. */
  more: (cursor: string | undefined) => MergeSource<OutboxEntry>[] = () => [],
): Promise<OutboxPage> {
  const limit = Math.max(1, page.limit);
  const after = page.cursor === undefined ? undefined : OUTBOX_CURSOR.exec(page.cursor);
  if (page.cursor !== undefined && !after) throw new Error(`invalid outbox cursor "${page.cursor}"`);
  const readChunks = (wanted: Key[]): Promise<Item[]> => table.batchGet(wanted);
  const sources: MergeSource<OutboxEntry>[] = Array.from({ length: SHARDS.outbox }, (_, shard) => {
    const partition = gsi.outbox(shard);
    return new MergeSource<OutboxEntry>(async (start) => {
      const values: Item = { ':p': S(partition) };
      let condition = 'gsi2pk = :p';
      if (page.createdBefore !== undefined) {
        condition += ' AND gsi2sk < :before';
        values[':before'] = S(time(page.createdBefore));
      }
      const exclusiveStart =
        start ??
        (after && page.cursor
          ? { ...keys.outbox(after[1] as string), gsi2pk: S(partition), gsi2sk: S(page.cursor) }
          : undefined);
      const { items, next } = await table.queryPage({
        IndexName: 'gsi2',
        KeyConditionExpression: condition,
        ExpressionAttributeValues: values,
        Limit: pageSizeFor(limit, SHARDS.outbox),
        ExclusiveStartKey: exclusiveStart,
      });
      const candidates: Candidate<OutboxEntry>[] = [];
      const found = await itemsOf(table, items);
      for (const entry of items) {
        const stored = found.get(keyString(entry));
        const item = stored && (await pending.resolve(stored));
        const sort = str(entry, 'gsi2sk');
        if (!item || sort === undefined) continue;
        candidates.push({ sort, value: await decodeJson<OutboxEntry>(item, readChunks) });
      }
      return { candidates, next };
    });
  });
  const recovery = { ...inline, cursor: page.cursor, createdBefore: page.createdBefore };
  for (let shard = 0; shard < SHARDS.outbox; shard++)
    sources.push(inlineSource(table, inlinePartition(shard), limit, recovery));
  sources.push(...more(after ? page.cursor : undefined));
  const { page: entries, more: rest } = await mergePage(sources, limit, 'ascending');
  const last = entries.at(-1);
  return rest && last
    ? { entries: entries.map((e) => e.value), cursor: last.sort }
    : { entries: entries.map((e) => e.value) };
}

/**
 * The entries job heads hold inline (inline-outbox.ts) in one gsi3 partition, oldest
 * first. A head keeps the index key of the commit that put it in gsi3, so its key's time is no
 * later than any entry it holds, but may be earlier: heads are read in index order from the start
 * of the partition (a cursor cannot skip any), and an entry is handed on once no head still to read
 * can hold an earlier one, that is once its time is before the key of the last head read. A head
 * found holding nothing is taken out of gsi3.
 */
function inlineSource(
  table: DynamoDbTable,
  partition: string,
  limit: number,
  recovery: InlineRecovery,
): MergeSource<OutboxEntry> {
  const { name, partitionKey, sortKey } = INLINE_INDEX;
  const values: Item = { ':p': S(partition) };
  let condition = `${partitionKey} = :p`;
  if (recovery.createdBefore !== undefined) {
    condition += ` AND ${sortKey} < :before`;
    values[':before'] = S(time(recovery.createdBefore));
  }
  return heldUntilRead<OutboxEntry>(async (start) => {
    const { items, next } = await table.queryPage({
      IndexName: name,
      KeyConditionExpression: condition,
      ExpressionAttributeValues: values,
      Limit: pageSizeFor(limit, SHARDS.outbox),
      ExclusiveStartKey: start,
    });
    const found = await itemsOf(table, items);
    const candidates: Candidate<OutboxEntry>[] = [];
    const done: Item[] = [];
    for (const entry of items) {
      const head = found.get(keyString(entry));
      if (!head) continue;
      const recovered = await recoverable(head, recovery);
      const jobId = jobIdOf(head);
      if (!recovered.holds) done.push(head);
      else for (const short of recovered.sent) recovery.sent.noteSent(jobId, short);
      candidates.push(...recovered.candidates);
    }
    await forEachLimit(done, PARALLEL_LEAVES, (head) => leaveInlineIndex(table, head));
    return { candidates, lastTime: str(items.at(-1), sortKey)?.slice(0, 15), next };
  });
}

/** Heads taken out of gsi3 at once by one page of recovery. */
const PARALLEL_LEAVES = 16;

/** Armed timers, earliest first: gsi2 partitions `TIM#<shard>` sorted by `<at>#<job>#<step>`, merged. */
export async function listTimers(
  table: DynamoDbTable,
  pending: PendingWrites,
  page: { dueBy?: number; limit: number },
): Promise<Timer[]> {
  const limit = Math.max(1, page.limit);
  const sources = Array.from({ length: SHARDS.timers }, (_, shard) => {
    const partition = gsi.timers(shard);
    return new MergeSource<Timer>(async (start) => {
      const values: Item = { ':p': S(partition) };
      let condition = 'gsi2pk = :p';
      if (page.dueBy !== undefined) {
        condition += ' AND gsi2sk <= :due';
        values[':due'] = S(`${time(page.dueBy)}#\uffff`);
      }
      const { items, next } = await table.queryPage({
        IndexName: 'gsi2',
        KeyConditionExpression: condition,
        ExpressionAttributeValues: values,
        Limit: pageSizeFor(limit, SHARDS.timers),
        ExclusiveStartKey: start,
      });
      const candidates: Candidate<Timer>[] = [];
      const found = await itemsOf(table, items);
      for (const entry of items) {
        const stored = found.get(keyString(entry));
        const item = stored && (await pending.resolve(stored));
        const text = str(item, 't');
        if (text === undefined) continue;
        const timer = JSON.parse(text) as Timer;
        if (page.dueBy !== undefined && timer.at > page.dueBy) continue;
        candidates.push({ sort: `${time(timer.at)}#${timer.jobId}#${timer.step ?? ''}`, value: timer });
      }
      return { candidates, next };
    });
  });
  const { page: timers } = await mergePage(sources, limit, 'ascending');
  return timers.map((candidate) => candidate.value);
}

const keyString = (item: Item): string => `${str(item, 'pk')}\u0000${str(item, 'sk')}`;

/**
 * The items behind index entries (the index holds keys only), read strongly consistent; an entry
 * whose item is gone since (sent, cleared) has none.
 */
async function itemsOf(table: DynamoDbTable, entries: readonly Item[]): Promise<Map<string, Item>> {
  if (!entries.length) return new Map();
  const items = await table.batchGet(entries.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key));
  return new Map(items.map((item) => [keyString(item), item]));
}
