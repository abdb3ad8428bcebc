import { ACTIVE_LISTED_STATUSES } from '../../../engine/index.js';
import { jobIdOf, keys, N, num } from './items.js';
import { TREE_SLACK_SECONDS, treeHorizon } from './job-items.js';
import { listedHeads } from './listed-heads.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit } from './table.js';
import { PARALLEL_JOBS, treeLevels } from './tree-walk.js';
import { raiseExpiry, type StampBudget, spend } from './ttl-stamps.js';

/**
 * The keep-alive of trees that run long. A fan-out child's head expires at its tree's horizon
 * (job-items.ts, `treeHorizon`: its creation + the retention + a day's slack), so that a tree that
 * ends soon after it began needs no stamp on its children's heads. No item of a tree expires before
 * the horizon of its root's creation: each was written after the root was created, and stamps and
 * keep-alives only raise expiries. A root whose tree has run so long that this horizon comes near
 * (`marginSeconds`) has its children's heads raised to the horizon of now, and records the raised
 * horizon in its head (`hz`, an attribute no commit writes), so that the next runs pass it by until
 * that one comes near in turn.
 *
 * The roots are found in the job listing (gsi1, every status of a job that has not ended, by
 * creation time), which the job's creation writes anyway: a tree costs nothing here until it has run
 * for the retention and more.
 */

/** A commit lands within this of the time it was computed (function timeouts are minutes). */
const LATE_COMMIT_SECONDS = 3_600;
const WEEK_SECONDS = 7 * 86_400;

/** How near a tree's horizon may come before it is raised: a week, or half the horizon's span if shorter. */
export function marginSeconds(retentionSeconds: number): number {
  return Math.min(WEEK_SECONDS, Math.floor((retentionSeconds + TREE_SLACK_SECONDS) / 2));
}

/**
 * Raises the horizons of running trees that come near theirs, until `budget` runs out (a tree left
 * half-raised is taken up next run). Returns the trees raised.
 */
export async function keepLongTreesAlive(
  table: DynamoDbTable,
  now: number,
  retentionSeconds: number,
  budget: StampBudget,
): Promise<number> {
  const margin = marginSeconds(retentionSeconds);
  const due = Math.ceil(now / 1_000) + margin;
  // A root created after this has a horizon past `due` already.
  const createdBefore = (due - retentionSeconds - TREE_SLACK_SECONDS) * 1_000;
  if (createdBefore <= 0) return 0;
  let raised = 0;
  for await (const root of listedHeads(table, ACTIVE_LISTED_STATUSES, createdBefore)) {
    const horizon = Math.max(num(root, 'hz') ?? 0, treeHorizon(num(root, 'ca') ?? 0, retentionSeconds));
    if (horizon >= due) continue;
    if (budget.writes <= 0 || budget.short) return raised;
    if (await raiseTree(table, jobIdOf(root), treeHorizon(now, retentionSeconds), budget)) raised++;
  }
  return raised;
}

/** Raises every child's head of one root's tree to `horizon`; true once the root records it. */
async function raiseTree(
  table: DynamoDbTable,
  rootId: string,
  horizon: number,
  budget: StampBudget,
): Promise<boolean> {
  const [, ...levels] = await treeLevels(table, rootId);
  for (const level of levels) {
    await forEachLimit(level, PARALLEL_JOBS, async (jobId) => {
      if (spend(budget)) await raiseExpiry(table, keys.head(jobId), horizon, 'leave');
    });
  }
  if (budget.short) return false;
  try {
    await table.update({
      Key: keys.head(rootId),
      UpdateExpression: 'SET hz = :hz',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':hz': N(horizon - LATE_COMMIT_SECONDS) },
    });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
