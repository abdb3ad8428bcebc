import { entriesOf } from './child-packs.js';
import { gsi, jobIdOf, keys, N, num, S, SHARDS, time } from './items.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit, type Item, type Key } from './table.js';
import { childEntries, isChildOf, walkLevels } from './tree-walk.js';

/**
 * Retention by TTL: a finished top-level job's head carries `expiresAt` (its end + the retention)
 * from its end commit, which also writes its chunks with it: for a job with no children and no
 * calls that is every item it has, and DynamoDB deletes them for free. A job whose tree holds more
 * (children's heads and chunks, their index entries and bucket listings, fan-out counters, `S#`
 * markers, commit markers, the tree's size `D`, unsent outbox items) waits in gsi2 (`TTL#<shard>`,
 * by end time) until `stampEndedTrees` has given each of those items the root's `expiresAt`, then
 * leaves it. A stamp only raises an expiry: a child's head carries its tree's horizon from its
 * creation (job-items.ts, `treeHorizon`), which is past the root's expiry when the tree ended within
 * a day of it, and then is not written again. No other item carries a TTL before the stamp, and no
 * child's head expires while its tree runs (tree-horizons.ts raises the horizon of a tree that
 * runs long).
 */

/** A root's cancelled children have ended (and the index shows the root) this long after its end. */
export const SETTLE_MS = 5 * 60_000;

/** What one run may write, so that a run ends in time; a tree it leaves half-stamped is taken up next run. */
export interface StampBudget {
  writes: number;
  /** Set once a write was left for want of budget. */
  short?: boolean;
}

/** Takes one write from the budget; false (and marks it short) once none is left. */
export function spend(budget: StampBudget): boolean {
  if (budget.writes <= 0) budget.short = true;
  return budget.writes-- > 0;
}

/**
 * Stamps the trees of roots that ended at least `SETTLE_MS` before `now`, oldest first in each shard,
 * until `budget` runs out. Returns the trees finished.
 */
export async function stampEndedTrees(
  table: DynamoDbTable,
  now: number,
  budget: StampBudget,
): Promise<number> {
  let trees = 0;
  for (let shard = 0; shard < SHARDS.unstamped; shard++) {
    let start: Item | undefined;
    do {
      const page = await table.queryPage({
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :p AND gsi2sk < :before',
        ExpressionAttributeValues: { ':p': S(gsi.unstamped(shard)), ':before': S(time(now - SETTLE_MS)) },
        ExclusiveStartKey: start,
      });
      const roots = await table.batchGet(page.items.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key));
      for (const root of roots) {
        if (budget.writes <= 0 || budget.short) return trees;
        if (await stampTree(table, root, budget)) trees++;
      }
      start = page.next;
    } while (start);
  }
  return trees;
}

/** Gives every item of one root's tree the root's `expiresAt`; true once the root has left gsi2. */
async function stampTree(table: DynamoDbTable, root: Item, budget: StampBudget): Promise<boolean> {
  const rootId = jobIdOf(root);
  const expiresAt = num(root, 'expiresAt');
  const rev = num(root, 'rev');
  if (!rootId || expiresAt === undefined || rev === undefined || !root.tt) return false;
  // Each job's children come from what its stamp reads anyway, and so does the check that a job
  // named by a children index is that parent's child (its head, read with the rest of its partition).
  const namedBy = new Map<string, string[]>();
  await walkLevels(
    rootId,
    async (jobId, depth) => {
      // Only the walk's first visit is the root's: an index entry naming the root is checked as any other.
      if (budget.writes > 0) return stampJob(table, jobId, depth === 0, namedBy, expiresAt, budget);
      budget.short = true;
      return [];
    },
    () => budget.short === true,
  );
  if (budget.short) return false;
  try {
    // Conditional on the revision: a root retried meanwhile keeps what its own commit wrote.
    await table.update({
      Key: keys.head(rootId),
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'rev = :rev',
      ExpressionAttributeValues: { ':rev': N(rev) },
    });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * One job's items: its partition, its fan-out steps' counters and children index, its unsent outbox
 * items. Returns the ids its children index names, each noted in `namedBy` (until it is visited)
 * with this job as a parent that names it. A job other than the root is stamped only if its head is
 * the child of a parent that names it: an index entry can name another job (tree-walk.ts,
 * `childrenOf`), which the stamp must leave alone.
 *
 * The queries of its partition and counters are eventually consistent, at half the price of
 * strongly consistent ones (its children index is read as every reader of it reads it): such a read
 * "may not reflect the results of a recently completed write operation"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
 * and the tree's writes are not recent: it ended at least `SETTLE_MS` ago.
 */
async function stampJob(
  table: DynamoDbTable,
  jobId: string,
  isRoot: boolean,
  namedBy: Map<string, string[]>,
  expiresAt: number,
  budget: StampBudget,
): Promise<string[]> {
  const own = await table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': S(keys.jobPk(jobId)) },
    ProjectionExpression: 'pk, sk, expiresAt, obx, pv, par, po',
    ConsistentRead: false,
  });
  if (!isRoot) {
    const head = own.find((item) => item.sk?.S === keys.head(jobId).sk?.S);
    const parents = namedBy.get(jobId) ?? [];
    namedBy.delete(jobId);
    if (!head || !parents.some((parentId) => isChildOf(head, parentId))) return [];
  }
  const items: Item[] = [...own];
  const outbox: Key[] = [];
  for (const item of own) {
    // A child never started is still pending: its unsent requests are named in its versions.
    const versions = item.pv?.L?.map((version) => version.M ?? {}) ?? [];
    for (const attrs of [item, ...versions])
      for (const id of attrs.obx?.SS ?? []) outbox.push(keys.outbox(id));
  }
  // Its fan-out steps' markers (`S#<step>`) are among its partition's items.
  const steps = own.map((item) => item.sk?.S ?? '').filter((sk) => sk.startsWith('S#'));
  const children: string[] = [];
  for (const step of steps.map((sk) => sk.slice(2))) {
    const counters = await table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(keys.fanPk(jobId, step)) },
      ProjectionExpression: 'pk, sk, expiresAt',
      ConsistentRead: false,
    });
    const entries = await childEntries(table, jobId, step);
    items.push(...counters, ...entries);
    for (const { id } of entries.flatMap(entriesOf)) {
      children.push(id);
      const parents = namedBy.get(id);
      if (!parents) namedBy.set(id, [jobId]);
      else if (!parents.includes(jobId)) parents.push(jobId);
    }
  }
  // An expiry is only ever raised: none (written while the tree ran), an older code's backstop, or
  // the stamp of a run the tree has since been retried past (its root ended again, later). A child's
  // head whose horizon (job-items.ts, `treeHorizon`) lies past the root's expiry keeps it.
  const due = items.filter((item) => (num(item, 'expiresAt') ?? 0) < expiresAt);
  await forEachLimit([...due.map((item) => ({ pk: item.pk, sk: item.sk }) as Key), ...outbox], 8, (key) =>
    spend(budget) ? raiseExpiry(table, key, expiresAt, 'set') : Promise.resolve(),
  );
  return children;
}

/**
 * Raises an item's `expiresAt` to `expiresAt` (an item gone meanwhile is not made again). An item
 * without one gets it when `unset` is 'set' (the stamp of an ended tree); with 'leave' it keeps none
 * (the keep-alive: such a head, older code's, never expires).
 */
export async function raiseExpiry(
  table: DynamoDbTable,
  key: Key,
  expiresAt: number,
  unset: 'set' | 'leave',
): Promise<void> {
  try {
    await table.update({
      Key: key,
      UpdateExpression: 'SET expiresAt = :at',
      ConditionExpression:
        unset === 'set'
          ? 'attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt < :at)'
          : 'attribute_exists(expiresAt) AND expiresAt < :at',
      ExpressionAttributeValues: { ':at': N(expiresAt) },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** A day: old code still running during a deploy finishes its jobs well within it. */
const LEGACY_MARGIN_MS = 86_400_000;

/**
 * Jobs created before this may have been finished by code that wrote no `tt` (before TTL
 * retention): the sweep's fallback looks at no job created later. The first run with TTL on
 * records its time plus a day (no later run changes it).
 */
export async function legacyCutoff(table: DynamoDbTable, now: number): Promise<number> {
  const found = num(await table.get(keys.legacyCutoff()), 'before');
  if (found !== undefined) return found;
  try {
    await table.put({
      Item: { ...keys.legacyCutoff(), before: N(now + LEGACY_MARGIN_MS) },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return now + LEGACY_MARGIN_MS;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return num(await table.get(keys.legacyCutoff()), 'before') ?? now;
  }
}
