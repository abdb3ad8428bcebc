import { type JobRecord, type OutboxEntry, requestStillOpen } from '../../../engine/index.js';
import { entrySort } from './inline-outbox.js';
import { decodeJson, keys, pad, S, SHARDS, shardOf, str, time } from './items.js';
import { type Candidate, MergeSource, pageSizeFor, queryWholeTimes } from './merge.js';
import type { PendingWrites } from './pending.js';
import type { DynamoDbTable, Item, Key } from './table.js';

// Requests to created children, up to 100 to a group item: see README.md, "The outbox".

/**
 * Requests in one group at most: compressed, a child's request costs far under a write unit, and a
 * group bounds what a crash (or a recovery racing a slow sender) can send twice.
 */
export const MAX_GROUP_ENTRIES = 100;

export const groupPartition = (shard: number): string => `OBG#${shard}`;

export interface GroupPlan {
  key: Key;
  /** The entries with their positions in the commit. */
  entries: [number, OutboxEntry][];
  /** The group's gsi2 attributes. */
  index: Item;
}

/**
 * Splits off the requests for `children` (jobs this commit creates) into groups, in commit order:
 * one group holds entries of one time, at most MAX_GROUP_ENTRIES. `rest` keeps the other entries
 * with their positions.
 */
export function planGroups(
  outbox: readonly OutboxEntry[],
  children: ReadonlySet<string>,
): { groups: GroupPlan[]; rest: [number, OutboxEntry][] } {
  const groups: GroupPlan[] = [];
  const rest: [number, OutboxEntry][] = [];
  let current: [number, OutboxEntry][] = [];
  const close = (): void => {
    const first = current[0];
    const last = current.at(-1);
    if (!first || !last) return;
    const id = first[1].id;
    groups.push({
      key: keys.outboxGroup(id),
      entries: current,
      index: {
        gsi2pk: S(groupPartition(shardOf(id, SHARDS.outbox))),
        gsi2sk: S(`${time(first[1].createdAt)}#${pad(last[0], 6)}#${id}`),
      },
    });
    current = [];
  };
  outbox.forEach((entry, seq) => {
    if (entry.kind !== 'request' || !children.has(entry.jobId) || entry.request.jobId !== entry.jobId) {
      rest.push([seq, entry]);
      return;
    }
    const first = current[0];
    if (first && (first[1].createdAt !== entry.createdAt || current.length >= MAX_GROUP_ENTRIES)) close();
    current.push([seq, entry]);
  });
  close();
  return { groups, rest };
}

/** Whether a child still waits for this request: it exists, and the engine's rule finds the request open. */
const stillOpen = (child: JobRecord | undefined, entry: OutboxEntry): boolean =>
  child !== undefined && entry.kind === 'request' && requestStillOpen(child, entry.request);

/** Requests remembered at most (a fan-out of a million children; about 100 bytes each). */
const MAX_REMEMBERED = 1_000_000;

/**
 * Which group holds each request this process committed or recovered, and what of each group is
 * still unacknowledged. Past its limit it forgets the oldest groups: such a group is not deleted by
 * this process, and recovery sends again those of its requests still open (at-least-once).
 */
export class GroupRequests {
  private readonly byEntry = new Map<string, string>();
  private readonly groups = new Map<string, { key: Key; left: Set<string> }>();

  note(key: Key, ids: readonly string[]): void {
    for (const [oldest, group] of this.groups) {
      if (this.byEntry.size + ids.length <= MAX_REMEMBERED) break;
      for (const id of group.left) this.byEntry.delete(id);
      this.groups.delete(oldest);
    }
    const name = `${key.pk.S}`;
    // Known already (committed here, or an earlier page): what was acknowledged since stays so.
    if (this.groups.has(name)) return;
    const group = { key, left: new Set<string>() };
    this.groups.set(name, group);
    for (const id of ids) {
      group.left.add(id);
      this.byEntry.set(id, name);
    }
  }

  /** Takes the acknowledged ids this knows of; returns the other ids and the groups now wholly acknowledged. */
  take(ids: readonly string[]): { rest: string[]; done: Key[] } {
    const rest: string[] = [];
    const touched = new Set<string>();
    for (const id of ids) {
      const name = this.byEntry.get(id);
      if (name === undefined) {
        rest.push(id);
        continue;
      }
      this.byEntry.delete(id);
      this.groups.get(name)?.left.delete(id);
      touched.add(name);
    }
    const done: Key[] = [];
    for (const name of touched) {
      const group = this.groups.get(name);
      if (group && !group.left.size) {
        this.groups.delete(name);
        done.push(group.key);
      }
    }
    return { rest, done };
  }
}

export interface GroupSourceDeps {
  table: DynamoDbTable;
  pending: PendingWrites;
  readJobs: (ids: readonly string[]) => Promise<Map<string, JobRecord>>;
  /** Told the requests of a group that recovery hands out (all of its open ones, not only this page's). */
  onGroup: (key: Key, ids: readonly string[]) => void;
}

const keyString = (item: Item): string => `${str(item, 'pk')}\u0000${str(item, 'sk')}`;

/**
 * The open requests of the groups in one gsi2 partition, in order. Groups of one time are read
 * together (their entries interleave by position) and a cursor resumes at its time and position.
 */
export function groupSource(
  deps: GroupSourceDeps,
  partition: string,
  limit: number,
  cursor: string | undefined,
  createdBefore: number | undefined,
): MergeSource<OutboxEntry> {
  const { table } = deps;
  const values: Item = { ':p': S(partition) };
  // `<time>#<seq>` of the cursor: a group whose last position is before it holds nothing after it.
  const from = cursor?.slice(0, 22);
  if (from !== undefined) values[':from'] = S(from);
  if (createdBefore !== undefined) values[':before'] = S(time(createdBefore));
  if (from !== undefined && createdBefore !== undefined && from.slice(0, 15) > time(createdBefore))
    return new MergeSource<OutboxEntry>(async () => ({ candidates: [] }));
  let condition = 'gsi2pk = :p';
  if (from !== undefined && createdBefore !== undefined) condition += ' AND gsi2sk BETWEEN :from AND :before';
  else if (from !== undefined) condition += ' AND gsi2sk >= :from';
  else if (createdBefore !== undefined) condition += ' AND gsi2sk < :before';
  const timeOf = (item: Item): string => (str(item, 'gsi2sk') ?? '').slice(0, 15);
  return new MergeSource<OutboxEntry>(async (start) => {
    const { items: whole, next } = await queryWholeTimes(
      table,
      {
        IndexName: 'gsi2',
        KeyConditionExpression: condition,
        ExpressionAttributeValues: values,
        Limit: pageSizeFor(limit, SHARDS.outbox),
      },
      start,
      timeOf,
    );
    const candidates = await groupCandidates(deps, whole, cursor, createdBefore);
    return next ? { candidates, next } : { candidates };
  });
}

/**
 * Deletes the groups none of whose requests is still open (after retention deleted their children,
 * or a crash left a group whose children all moved on). Only groups not yet acknowledged are in the
 * index, so this reads little.
 */
export async function deleteSpentGroups(deps: Omit<GroupSourceDeps, 'onGroup'>): Promise<void> {
  for (let shard = 0; shard < SHARDS.outbox; shard++) {
    const entries = await deps.table.queryAll({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :p',
      ExpressionAttributeValues: { ':p': S(groupPartition(shard)) },
    });
    await groupCandidates({ ...deps, onGroup: () => {} }, entries, undefined, Number.MAX_SAFE_INTEGER);
  }
}

async function groupCandidates(
  deps: GroupSourceDeps,
  entries: readonly Item[],
  cursor: string | undefined,
  createdBefore: number | undefined,
): Promise<Candidate<OutboxEntry>[]> {
  if (!entries.length) return [];
  const { table, pending } = deps;
  const stored = await table.batchGet(entries.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key));
  const byKey = new Map(stored.map((item) => [keyString(item), item]));
  const groups: { key: Key; entries: [number, OutboxEntry][] }[] = [];
  for (const entry of entries) {
    const raw = byKey.get(keyString(entry));
    const item = raw && (await pending.resolve(raw));
    if (!item) continue;
    const held = await decodeJson<[number, OutboxEntry][]>(item, (wanted) => table.batchGet(wanted));
    groups.push({ key: { pk: entry.pk, sk: entry.sk } as Key, entries: held });
  }
  const children = await deps.readJobs([
    ...new Set(groups.flatMap((group) => group.entries.map(([, entry]) => entry.jobId))),
  ]);
  const candidates: Candidate<OutboxEntry>[] = [];
  const spent: Key[] = [];
  for (const group of groups) {
    const open = group.entries.filter(([, entry]) => stillOpen(children.get(entry.jobId), entry));
    if (!open.length) {
      // Nothing of it is left to send: only recovery's own (old) groups are cleaned up here.
      const first = group.entries[0]?.[1];
      if (createdBefore !== undefined && first && first.createdAt < createdBefore) spent.push(group.key);
      continue;
    }
    deps.onGroup(
      group.key,
      open.map(([, entry]) => entry.id),
    );
    for (const [seq, entry] of open) {
      const sort = entrySort(entry, seq);
      if (cursor !== undefined && sort <= cursor) continue;
      if (createdBefore !== undefined && entry.createdAt >= createdBefore) continue;
      candidates.push({ sort, value: entry });
    }
  }
  if (spent.length) await table.batchWrite(spent.map((key) => ({ delete: key })));
  return candidates.sort((a, b) => (a.sort < b.sort ? -1 : 1));
}
