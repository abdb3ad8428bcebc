import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { JobStatus } from '../../engine/job/types.js';
import { keys, N, num, SHARDS, shardOf } from './dynamodb-items.js';
import type { DynamoDbTable } from './dynamodb-table.js';

const STATUSES: readonly JobStatus[] = ['waiting', 'running', 'completed', 'failed', 'cancelled'];

/**
 * Top-level jobs per workflow and status: items `CNT#<shard>` / `<workflow>` with one number per
 * status, moved in the same transaction as the job's status (a job always counts in the shard its id
 * hashes to). Reading one workflow's counts is one batch read of its shards; the shards' partitions
 * also list every workflow that has jobs.
 */
export function countsChange(
  workflow: string,
  jobId: string,
  from: JobStatus | undefined,
  to: JobStatus | undefined,
): TransactWriteItem {
  const names: Record<string, string> = {};
  const values: Record<string, { N: string }> = {};
  const adds: string[] = [];
  if (to) {
    names['#to'] = to;
    values[':up'] = N(1) as { N: string };
    adds.push('#to :up');
  }
  if (from) {
    names['#from'] = from;
    values[':down'] = N(-1) as { N: string };
    adds.push('#from :down');
  }
  return {
    Update: {
      TableName: undefined,
      Key: keys.counts(shardOf(jobId, SHARDS.counts), workflow),
      UpdateExpression: `ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

export async function readCounts(table: DynamoDbTable, workflow: string): Promise<Record<JobStatus, number>> {
  const counts: Record<JobStatus, number> = { waiting: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
  const shards = Array.from({ length: SHARDS.counts }, (_, shard) => keys.counts(shard, workflow));
  for (const item of await table.batchGet(shards)) {
    for (const status of STATUSES) counts[status] += num(item, status) ?? 0;
  }
  return counts;
}

/** Workflows with top-level jobs (in `status`, when given), from the counters. */
export async function workflowsWithJobs(table: DynamoDbTable, status?: JobStatus): Promise<string[]> {
  const totals = new Map<string, number>();
  for (let shard = 0; shard < SHARDS.counts; shard++) {
    const items = await table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: keys.countsPk(shard) } },
    });
    for (const item of items) {
      const name = item.sk?.S;
      if (name === undefined) continue;
      const count = (status ? [status] : STATUSES).reduce((sum, s) => sum + (num(item, s) ?? 0), 0);
      totals.set(name, (totals.get(name) ?? 0) + count);
    }
  }
  return [...totals].filter(([, count]) => count > 0).map(([name]) => name);
}
