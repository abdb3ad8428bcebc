import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { EveryField, LimitChange, QueuedJob, RunningCount } from '../../../engine/index.js';
import { N, num, pad, S, str } from './items.js';
import { type DynamoDbTable, type Key, keyOf } from './table.js';

// maxRunning (engine/job/running-limit.ts): one partition per workflow, `LIM#<workflow>`, holding
// the counter item `C` (`run`, `q`, `nx`) and one item per queued job, `Q#<place>`, in queue order.
// See README.md, "maxRunning".

const counterKey = (workflow: string): Key => keyOf(`LIM#${workflow}`, 'C');
const queueKey = (workflow: string, seq: number): Key => keyOf(`LIM#${workflow}`, `Q#${pad(seq, 15)}`);

const NAMES = { '#run': 'run', '#q': 'q', '#nx': 'nx' };

/**
 * The writes of a change, for the job's own transaction: the counter update, conditional as
 * `changeAllowed` says (a refused condition cancels the whole commit), and the queue item.
 */
export function limitWrites(change: LimitChange): TransactWriteItem[] {
  const counter = (expression: string, condition: string | undefined, values: Record<string, number>) => {
    const names: Record<string, string> = {};
    for (const [name, attribute] of Object.entries(NAMES))
      if (expression.includes(name) || condition?.includes(name)) names[name] = attribute;
    return {
      Update: {
        TableName: undefined,
        Key: counterKey(change.workflow),
        UpdateExpression: expression,
        ...(condition ? { ConditionExpression: condition } : {}),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, N(v)])),
      },
    } satisfies TransactWriteItem;
  };
  const room = '(attribute_not_exists(#run) OR #run < :max)';
  switch (change.op) {
    case 'take':
      return [
        counter('ADD #run :one', `${room} AND (attribute_not_exists(#q) OR #q = :zero)`, {
          ':one': 1,
          ':zero': 0,
          ':max': change.max,
        }),
      ];
    case 'enqueue': {
      // `nx` is written only as a place + 1, so it is absent exactly while the next place is 0.
      const place = change.seq === 0 ? 'attribute_not_exists(#nx)' : '#nx = :seq';
      const values: Record<string, number> = {
        ':one': 1,
        ':zero': 0,
        ':max': change.max,
        ':next': change.seq + 1,
      };
      if (change.seq !== 0) values[':seq'] = change.seq;
      return [
        counter('ADD #q :one SET #nx = :next', `${place} AND (#run >= :max OR #q > :zero)`, values),
        {
          Put: {
            TableName: undefined,
            Item: { ...queueKey(change.workflow, change.seq), job: S(change.jobId) },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ];
    }
    case 'promote':
      return [
        counter('ADD #run :one, #q :minus', room, { ':one': 1, ':minus': -1, ':max': change.max }),
        { Delete: { TableName: undefined, Key: queueKey(change.workflow, change.seq) } },
      ];
    case 'dequeue':
      return [
        counter('ADD #q :minus', undefined, { ':minus': -1 }),
        { Delete: { TableName: undefined, Key: queueKey(change.workflow, change.seq) } },
      ];
    case 'release':
      return [counter('ADD #run :minus', undefined, { ':minus': -1 })];
  }
}

export async function readRunningCount(table: DynamoDbTable, workflow: string): Promise<RunningCount> {
  const item = await table.get(counterKey(workflow));
  return {
    running: num(item, 'run') ?? 0,
    queued: num(item, 'q') ?? 0,
    nextSeq: num(item, 'nx') ?? 0,
  } satisfies EveryField<RunningCount>;
}

/** The queue's first items, strongly consistent (the commit that queued a job is seen by the next read). */
export async function listQueued(
  table: DynamoDbTable,
  workflow: string,
  limit: number,
): Promise<QueuedJob[]> {
  const { items } = await table.queryPage({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :q)',
    ExpressionAttributeValues: { ':pk': S(`LIM#${workflow}`), ':q': S('Q#') },
    ConsistentRead: true,
    Limit: Math.max(1, Math.trunc(limit)),
  });
  return items.map(
    (item) =>
      ({
        jobId: str(item, 'job') as string,
        seq: Number((str(item, 'sk') as string).slice(2)),
      }) satisfies EveryField<QueuedJob>,
  );
}
