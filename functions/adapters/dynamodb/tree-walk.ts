import { bucketItems, entriesOf } from './child-packs.js';
import { jobIdOf, keys, S, str } from './items.js';
import { type DynamoDbTable, forEachLimit, type Item } from './table.js';

/** Walking a tree from its root: the keep-alive of running trees (tree-horizons.ts) and the sweep (retention.ts) go level by level; the expiry stamp (ttl-stamps.ts) reads children as it goes. */

export const PARALLEL_JOBS = 16;

/**
 * Visits a tree level by level from its root, the root's level first: `visit` gives each job's
 * children (the next level is theirs, without repeats), until there are none or `stop()` says so.
 * `depth` is 0 for the root. Returns the levels visited.
 */
export async function walkLevels(
  rootId: string,
  visit: (jobId: string, depth: number) => Promise<string[]>,
  stop: () => boolean = () => false,
): Promise<string[][]> {
  const levels: string[][] = [];
  for (let level = [rootId]; level.length && !stop(); ) {
    const depth = levels.length;
    levels.push(level);
    const next: string[] = [];
    await forEachLimit(level, PARALLEL_JOBS, async (jobId) => {
      next.push(...(await visit(jobId, depth)));
    });
    level = [...new Set(next)];
  }
  return levels;
}

/** The tree's job ids level by level, the root's level first (through `S#<step>` markers and the children index). */
export function treeLevels(table: DynamoDbTable, rootId: string): Promise<string[][]> {
  return walkLevels(rootId, async (jobId) => {
    const children: string[] = [];
    for (const step of await fanOutSteps(table, jobId))
      children.push(...(await childrenIn(table, jobId, await childEntries(table, jobId, step))));
    return children;
  });
}

/** The children a job's children-index items (`childEntries`) name, as `childrenOf` keeps them. */
function childrenIn(table: DynamoDbTable, parentId: string, entries: readonly Item[]): Promise<string[]> {
  return childrenOf(
    table,
    parentId,
    entries.flatMap(entriesOf).map((entry) => entry.id),
  );
}

/**
 * Of the ids a job's children index names, those whose heads are the job's children: committed with
 * it as their parent (`par`), or still pending from its commit (`po`). An index entry can name another
 * job: a commit that wrote its entries before it found a child's id taken (an element bringing another
 * job's id) leaves that entry behind, and retention must never stamp or delete that other job.
 */
async function childrenOf(table: DynamoDbTable, parentId: string, ids: string[]): Promise<string[]> {
  const heads = await table.batchGet(ids.map((id) => keys.head(id)));
  return heads.filter((head) => isChildOf(head, parentId)).map((head) => jobIdOf(head));
}

/** Whether a head is a child of `parentId`: committed with it as its parent (`par`), or still pending from its commit (`po`). */
export const isChildOf = (head: Item, parentId: string): boolean =>
  str(head, 'par') === parentId || str(head, 'po') === parentId;

/** The steps of a job that have children (its `S#<step>` markers). */
export async function fanOutSteps(table: DynamoDbTable, jobId: string): Promise<string[]> {
  const markers = await table.queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :step)',
    ExpressionAttributeValues: { ':pk': S(keys.jobPk(jobId)), ':step': S('S#') },
    ConsistentRead: true,
  });
  return markers.map((marker) => (str(marker, 'sk') ?? '').slice(2));
}

/**
 * Every item of one fan-out step's children index: packs of entries (`pk`, `sk`, `ix`, `ids`,
 * `expiresAt`; child-packs.ts), older single entries (`id`) and bucket listings, buckets in order
 * (indexes are dense, so the first empty bucket ends them).
 */
export async function childEntries(table: DynamoDbTable, parentId: string, step: string): Promise<Item[]> {
  const entries: Item[] = [];
  for (let bucket = 0; ; bucket++) {
    const page = await bucketItems(
      table,
      keys.childrenPk(parentId, step, bucket),
      'pk, sk, ix, id, ids, expiresAt',
    );
    if (!page.length) return entries;
    entries.push(...page);
  }
}
