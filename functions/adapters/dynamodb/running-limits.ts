import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import {
  type CounterTest,
  counterTestHolds,
  type EveryField,
  type LimitChange,
  limitCondition,
  limitEffect,
  type QueuedJob,
  type RunningCount,
} from '../../../engine/index.js';
import { N, num, pad, S, str } from './items.js';
import { type DynamoDbTable, type Item, type Key, keyOf } from './table.js';

// maxRunning (engine/job/running-limit.ts): one partition per workflow, `LIM#<workflow>`, holding
// the counter item `C` (`run`, `q`, `nx`) and one item per queued job, `Q#<place>`, in queue order.
// See README.md, "maxRunning". `nx` is only ever set to a place + 1, so it is absent exactly while
// the next place is 0.

const counterKey = (workflow: string): Key => keyOf(`LIM#${workflow}`, 'C');
const queueKey = (workflow: string, seq: number): Key => keyOf(`LIM#${workflow}`, `Q#${pad(seq, 15)}`);

/** Each counter of a workflow's RunningCount as an attribute of its counter item. */
const ATTRIBUTE = { running: 'run', queued: 'q', nextSeq: 'nx' } as const satisfies Record<
  keyof RunningCount,
  string
>;

/**
 * The writes of a change, for the job's own transaction: the counter update, conditional as the
 * engine's `limitCondition` says (a refused condition cancels the whole commit), and the queue item.
 */
export function limitWrites(change: LimitChange): TransactWriteItem[] {
  const writes: TransactWriteItem[] = [counterUpdate(change)];
  if (change.op === 'enqueue')
    writes.push({
      Put: {
        TableName: undefined,
        Item: { ...queueKey(change.workflow, change.seq), job: S(change.jobId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  else if (change.op === 'promote' || change.op === 'dequeue')
    writes.push({ Delete: { TableName: undefined, Key: queueKey(change.workflow, change.seq) } });
  return writes;
}

/** The engine's `limitEffect` and `limitCondition` of a change as one update of the counter item. */
function counterUpdate(change: LimitChange): TransactWriteItem {
  const names: Record<string, string> = {};
  const values: Item = {};
  const name = (counter: keyof RunningCount): string => {
    names[`#${ATTRIBUTE[counter]}`] = ATTRIBUTE[counter];
    return `#${ATTRIBUTE[counter]}`;
  };
  const value = (number: number): string => {
    const placeholder = `:v${Object.keys(values).length}`;
    values[placeholder] = N(number);
    return placeholder;
  };
  const effect = limitEffect(change);
  const adds = Object.entries(effect.add).map(
    ([counter, by]) => `${name(counter as keyof RunningCount)} ${value(by)}`,
  );
  let expression = `ADD ${adds.join(', ')}`;
  if (effect.nextSeq !== undefined) expression += ` SET ${name('nextSeq')} = ${value(effect.nextSeq)}`;
  // A counter not written yet is 0 to the engine: where a test holds for 0, its absence passes too.
  const test = (counterTest: CounterTest): string => {
    const compared = `${name(counterTest.counter)} ${counterTest.is} ${value(counterTest.value)}`;
    return counterTestHolds(0, counterTest)
      ? `(attribute_not_exists(${name(counterTest.counter)}) OR ${compared})`
      : compared;
  };
  const condition = limitCondition(change);
  const tests = condition.all.map(test);
  if (condition.any) tests.push(`(${condition.any.map(test).join(' OR ')})`);
  return {
    Update: {
      TableName: undefined,
      Key: counterKey(change.workflow),
      UpdateExpression: expression,
      ...(tests.length ? { ConditionExpression: tests.join(' AND ') } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

export async function readRunningCount(table: DynamoDbTable, workflow: string): Promise<RunningCount> {
  const item = await table.get(counterKey(workflow));
  return {
    running: num(item, ATTRIBUTE.running) ?? 0,
    queued: num(item, ATTRIBUTE.queued) ?? 0,
    nextSeq: num(item, ATTRIBUTE.nextSeq) ?? 0,
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
