import { FINISHED_JOB_STATUSES, type JobStatus } from '../../../engine/index.js';
import { jobIdOf, keys, num, S, str } from './items.js';
import { countsChange } from './job-counts.js';
import { listedHeads } from './listed-heads.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit, type Item, type Key } from './table.js';
import { childEntries, PARALLEL_JOBS, treeLevels } from './tree-walk.js';

/** How a sweep run is bounded, and which roots it may take. */
export interface SweepLimits {
  /** Roots deleted at most in one run (with their trees); the next run goes on. */
  maxRoots: number;
  /** Only roots created before this (ms): with TTL on, no job created later can lack `tt` (see below). */
  createdBefore?: number;
}

/**
 * Retention by deletion: finished top-level jobs that ended before `endedBefore`, each deleted with
 * its whole tree. With a retention set, a finished job's tree expires by TTL (`tt` on its head:
 * ttl-stamps.ts): the sweep is then only the fallback for trees finished by older code, which
 * carry no `tt`, and it leaves every root that does. They are found in the job listing (gsi1
 * `L#<workflow>#<finished status>#<shard>`, by creation time: a job that ended before `endedBefore`
 * was created before it too), read from the table, and those that ended since are left (a finished
 * job then costs no index entry of its own for retention). The root is first marked (`del`: its own
 * commits, a retry, now fail); its descendants are found level by level (through the `S#<step>`
 * markers and the children index) and deleted deepest level first, and the root last, with its
 * count: a sweep that stops half-way (`maxRoots`) leaves every remaining job reachable from the root
 * for the next one.
 */
export async function deleteFinishedJobs(
  table: DynamoDbTable,
  endedBefore: number,
  limits: SweepLimits = { maxRoots: Number.POSITIVE_INFINITY },
): Promise<number> {
  const before = Math.min(endedBefore, limits.createdBefore ?? endedBefore);
  let deleted = 0;
  let roots = 0;
  // A job that ended before `endedBefore` was created before it too; those that ended since are left.
  for await (const root of listedHeads(table, FINISHED_JOB_STATUSES, before)) {
    const ended = num(root, 'ea');
    if (ended === undefined || ended >= endedBefore || root.tt) continue;
    if (roots >= limits.maxRoots) return deleted;
    roots++;
    deleted += await deleteTree(table, root, endedBefore);
  }
  return deleted;
}

/** The engine's finished statuses as expression values `:s0`, `:s1`, … */
const FINISHED: Item = Object.fromEntries(FINISHED_JOB_STATUSES.map((status, n) => [`:s${n}`, S(status)]));

async function deleteTree(table: DynamoDbTable, root: Item, endedBefore: number): Promise<number> {
  const rootId = jobIdOf(root);
  const rev = num(root, 'rev');
  const status = str(root, 'st') as JobStatus | undefined;
  const workflow = str(root, 'wf');
  if (!rootId || rev === undefined || !status || workflow === undefined) return 0;
  try {
    await table.update({
      Key: keys.head(rootId),
      UpdateExpression: 'SET del = :now',
      ConditionExpression: `rev = :rev AND st IN (${Object.keys(FINISHED).join(', ')}) AND (attribute_not_exists(ea) OR ea < :before)`,
      ExpressionAttributeValues: {
        ':now': { N: String(Date.now()) },
        ':rev': { N: String(rev) },
        ...FINISHED,
        ':before': { N: String(endedBefore) },
      },
    });
  } catch (error) {
    if (isConditionFailure(error)) return 0;
    throw error;
  }

  const levels = await treeLevels(table, rootId);
  let deleted = 0;
  for (const level of levels.reverse()) {
    await forEachLimit(level, PARALLEL_JOBS, async (jobId) => {
      const heads = await deleteJobItems(table, jobId, jobId === rootId);
      deleted += heads;
    });
  }
  const counter = countsChange(workflow, rootId, status, undefined);
  try {
    await table.transact([
      {
        Delete: {
          TableName: undefined,
          Key: keys.head(rootId),
          ConditionExpression: 'attribute_exists(del) AND rev = :rev',
          ExpressionAttributeValues: { ':rev': { N: String(rev) } },
        },
      },
      ...(counter ? [counter] : []),
    ]);
    deleted++;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  return deleted;
}

/**
 * Deletes one job's items: its partition (the root's head excepted: it goes last), its children
 * index and counters, and its unsent outbox entries. Returns 1 when it had a head, else 0.
 */
async function deleteJobItems(table: DynamoDbTable, jobId: string, isRoot: boolean): Promise<number> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': S(keys.jobPk(jobId)) },
    ProjectionExpression: 'pk, sk, obx, pv',
    ConsistentRead: true,
  });
  const doomed: Key[] = [];
  let heads = 0;
  for (const item of items) {
    const sk = str(item, 'sk') ?? '';
    if (sk === 'J') {
      // A child never started is still pending: its unsent requests are named in its versions.
      const versions = item.pv?.L?.map((version) => version.M ?? {}) ?? [];
      for (const attrs of [item, ...versions])
        for (const id of attrs.obx?.SS ?? []) doomed.push(keys.outbox(id));
      if (isRoot) continue;
      heads++;
    }
    if (sk.startsWith('S#')) {
      const step = sk.slice(2);
      const counters = await table.queryAll({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': S(keys.fanPk(jobId, step)) },
        ProjectionExpression: 'pk, sk',
      });
      for (const item of [...counters, ...(await childEntries(table, jobId, step))]) {
        doomed.push({ pk: item.pk, sk: item.sk } as Key);
      }
    }
    doomed.push({ pk: item.pk, sk: item.sk } as Key);
  }
  await table.batchWrite(doomed.map((key) => ({ delete: key })));
  return heads;
}
