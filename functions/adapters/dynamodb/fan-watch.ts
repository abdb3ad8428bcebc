import { type FanCounts, type JobRecord, type OutboxEntry, readyToFanIn } from '../../../engine/index.js';
import { entrySort } from './inline-outbox.js';
import { N, num, S, SHARDS, shardOf, str } from './items.js';
import { type Candidate, MergeSource } from './merge.js';
import type { PendingWrites } from './pending.js';
import { isConditionFailure } from './retry.js';
import type { DynamoDbTable, Item, Key } from './table.js';
import { SWITCHYARD_TABLE } from './table-schema.js';

// A fan-out's watcher, for a crash between a child's final commit and the fan-in: see README.md, "Fan-out and fan-in".

export const WATCH_INDEX = SWITCHYARD_TABLE.indexes.gsi3;
export const watchPartition = (shard: number): string => `FWT#${shard}`;

/** The attributes that put shard 0 of a fan-out's counters in gsi3. */
export function fanWatch(parentId: string, step: string): Item {
  return {
    [WATCH_INDEX.partitionKey]: S(watchPartition(shardOf(parentId, SHARDS.outbox))),
    [WATCH_INDEX.sortKey]: S(`${parentId}#${step}`),
    wa: N(Date.now()),
  };
}

/** The id of a watcher's fan-in follow-up: never stored, so acknowledging it writes nothing. */
export const fanInId = (parentId: string, step: string): string => `FAN#${parentId}#${step}`;
export const isFanInId = (id: string): boolean => id.startsWith('FAN#');

/** A fan-out's counters as stored (fan-counters.ts): the counts, and what a fan-in needs besides them. */
export interface StoredFan {
  counts: FanCounts;
  shards: number;
  /** From the fan-out's `FanInit`: passed on to the engine's `readyToFanIn`. */
  continueOnError: boolean;
}

export interface WatchDeps {
  table: DynamoDbTable;
  pending: PendingWrites;
  /** A fan-out's counters: only this of `FanCounters`, which imports this file for `fanWatch`. */
  fans: { readStored(parentId: string, step: string): Promise<StoredFan | undefined> };
  readJobs: (ids: readonly string[]) => Promise<Map<string, JobRecord>>;
}

/** The fan-in follow-ups of the watched fan-outs in one gsi3 partition, all at once, in order. */
export function watchSource(
  deps: WatchDeps,
  partition: string,
  cursor: string | undefined,
  createdBefore: number | undefined,
): MergeSource<OutboxEntry> {
  return new MergeSource<OutboxEntry>(async () => {
    const { table, pending, fans } = deps;
    const entries = await table.queryAll({
      IndexName: WATCH_INDEX.name,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': WATCH_INDEX.partitionKey },
      ExpressionAttributeValues: { ':p': S(partition) },
    });
    if (!entries.length) return { candidates: [] };
    const stored = await table.batchGet(entries.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key));
    const watched: { key: Key; parentId: string; step: string; armed: number }[] = [];
    for (const raw of stored) {
      if (!(await pending.resolve(raw))) continue;
      const sort = str(raw, WATCH_INDEX.sortKey) ?? '';
      const cut = sort.indexOf('#');
      const armed = num(raw, 'wa');
      if (cut < 0 || armed === undefined) continue;
      watched.push({
        key: { pk: raw.pk, sk: raw.sk } as Key,
        parentId: sort.slice(0, cut),
        step: sort.slice(cut + 1),
        armed,
      });
    }
    const parents = await deps.readJobs([...new Set(watched.map((w) => w.parentId))]);
    const candidates: Candidate<OutboxEntry>[] = [];
    for (const { key, parentId, step, armed } of watched) {
      const state = parents.get(parentId)?.steps.find((s) => s.name === step);
      if (state?.status !== 'running') {
        await unwatch(table, key, armed);
        continue;
      }
      if (createdBefore !== undefined && armed >= createdBefore) continue;
      const fan = await fans.readStored(parentId, step);
      // The engine's rule, with the `continueOnError` stored with the counters.
      if (!fan || !readyToFanIn(fan.counts, fan.continueOnError)) continue;
      const { counts } = fan;
      const entry: OutboxEntry = {
        id: fanInId(parentId, step),
        kind: 'followUp',
        jobId: parentId,
        createdAt: armed,
        followUp: { kind: 'childFinished', parentId, step, index: counts.total - 1, status: 'completed' },
      };
      const sort = entrySort(entry, 0);
      if (cursor === undefined || sort > cursor) candidates.push({ sort, value: entry });
    }
    return { candidates: candidates.sort((a, b) => (a.sort < b.sort ? -1 : 1)) };
  });
}

/** Takes a fan-out whose step ended out of gsi3, unless it was armed again since (a retried step). */
async function unwatch(table: DynamoDbTable, key: Key, armed: number): Promise<void> {
  try {
    await table.update({
      Key: key,
      UpdateExpression: 'REMOVE #p, #s',
      ConditionExpression: 'wa = :armed',
      ExpressionAttributeNames: { '#p': WATCH_INDEX.partitionKey, '#s': WATCH_INDEX.sortKey },
      ExpressionAttributeValues: { ':armed': N(armed) },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
