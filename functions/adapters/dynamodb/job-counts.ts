import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import {
  ACTIVE_LISTED_STATUSES,
  FINISHED_JOB_STATUSES,
  isFinished,
  type JobStatus,
  type ListedStatus,
  zeroListedCounts,
} from '../../../engine/index.js';
import { gsi, keys, N, num, S, SHARDS, shardOf } from './items.js';
import type { DynamoDbTable } from './table.js';
import { registeredWorkflows } from './workflows.js';

// Top-level jobs per workflow and status, counted two ways: see README.md, "The indexes".

// Paused jobs have not ended: counted from their listing partitions like running ones. The
// partitions are by listed status (`waiting`: waiting for someone; `pending`: not started).
const ACTIVE_STATUSES = ACTIVE_LISTED_STATUSES;

/** What a status change adds to the finished counts (nothing when neither status is finished). */
export function finishedCountsChange(
  from: JobStatus | undefined,
  to: JobStatus | undefined,
): Record<string, number> | undefined {
  if (from === to) return undefined;
  const adds: Record<string, number> = {};
  if (to && isFinished(to)) adds[to] = 1;
  if (from && isFinished(from)) adds[from] = -1;
  return Object.keys(adds).length ? adds : undefined;
}

/** The counter update of one job's status change, or undefined when it moves no finished count. */
export function countsChange(
  workflow: string,
  jobId: string,
  from: JobStatus | undefined,
  to: JobStatus | undefined,
): TransactWriteItem | undefined {
  const change = finishedCountsChange(from, to);
  if (!change) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, { N: string }> = {};
  const adds = Object.entries(change).map(([status, by], n) => {
    names[`#s${n}`] = status;
    values[`:s${n}`] = N(by) as { N: string };
    return `#s${n} :s${n}`;
  });
  return {
    Update: {
      TableName: undefined,
      Key: countsKey(workflow, jobId),
      UpdateExpression: `ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

export const countsKey = (workflow: string, jobId: string) =>
  keys.counts(shardOf(jobId, SHARDS.counts), workflow);

export async function readCounts(
  table: DynamoDbTable,
  workflow: string,
): Promise<Record<ListedStatus, number>> {
  const counts = zeroListedCounts();
  const shards = Array.from({ length: SHARDS.counts }, (_, shard) => keys.counts(shard, workflow));
  const [items, active] = await Promise.all([
    table.batchGet(shards),
    Promise.all(
      ACTIVE_STATUSES.flatMap((status) =>
        Array.from({ length: SHARDS.listing }, async (_, shard) => ({
          status,
          count: await table.count({
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :p',
            ExpressionAttributeValues: { ':p': S(gsi.listing(workflow, status, shard)) },
          }),
        })),
      ),
    ),
  ]);
  for (const item of items) {
    for (const status of FINISHED_JOB_STATUSES) counts[status] += num(item, status) ?? 0;
  }
  for (const { status, count } of active) counts[status] += count;
  return counts;
}

/**
 * Workflows that may have top-level jobs (in `status`, when given): those with finished jobs from
 * the counters; for jobs that have not ended, which count in no counter, every registered workflow
 * (a top-level job starts from one).
 */
export async function workflowsWithJobs(table: DynamoDbTable, status?: ListedStatus): Promise<string[]> {
  const names = new Set<string>();
  const finished = status !== undefined && (FINISHED_JOB_STATUSES as readonly string[]).includes(status);
  if (status === undefined || finished) {
    for (let shard = 0; shard < SHARDS.counts; shard++) {
      const items = await table.queryAll({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': S(keys.countsPk(shard)) },
      });
      for (const item of items) {
        const count = (status ? [status] : FINISHED_JOB_STATUSES).reduce(
          (sum, s) => sum + (num(item, s) ?? 0),
          0,
        );
        if (count > 0 && item.sk?.S !== undefined) names.add(item.sk.S);
      }
    }
  }
  if (status === undefined || !finished) {
    for (const name of await registeredWorkflows(table)) names.add(name);
  }
  return [...names];
}
