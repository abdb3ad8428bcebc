import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { isFinished } from '../../../engine/index.js';
import { countsChange } from './job-counts.js';
import type { StreamHead } from './stream-heads.js';

/**
 * A finished top-level job that DynamoDB's TTL deleted leaves the finished counts (`CNT#`, README.md,
 * "The indexes" and "Retention"), as the delete sweep's own transaction took it off them: the head's
 * deletion on the table's stream is where that is known. Children and unfinished heads count nowhere.
 */
export function expiredCountsUpdate(head: StreamHead, tableName: string): UpdateItemCommand | undefined {
  if (head.parentId !== undefined || !isFinished(head.status)) return undefined;
  const change = countsChange(head.qualifiedWorkflow, head.jobId, head.status, undefined)?.Update;
  if (!change?.Key || !change.UpdateExpression) return undefined;
  return new UpdateItemCommand({
    TableName: tableName,
    Key: change.Key,
    UpdateExpression: change.UpdateExpression,
    ExpressionAttributeNames: change.ExpressionAttributeNames,
    ExpressionAttributeValues: change.ExpressionAttributeValues,
  });
}
