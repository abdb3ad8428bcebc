import { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { createRepliesSqsHandler } from '../../../functions/handlers/replies-sqs.js';
import { aLambdaContext, anSqsEvent, anSqsReplyRecord } from '../../support/aws-events.js';
import { failingStore, memoryManager, storeRefusing } from '../../support/memory-manager.js';

const workflow = {
  name: 'greet',
  steps: [{ name: 'hello' }, { name: 'bye', depends: ['hello'] }],
};

async function startedJobs(harness: ReturnType<typeof memoryManager>, count: number): Promise<string[]> {
  await harness.manager.registerWorkflow(workflow);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const { job } = await harness.manager.startJob({ workflow: 'greet', input: { n } });
    ids.push(job.id);
  }
  await harness.manager.drain();
  return ids;
}

const dynamodb = mockClient(DynamoDBClient);

afterEach(() => {
  dynamodb.reset();
});

describe('Handler: replies-sqs', () => {
  it('applies a batch of replies in one call, sends what they make ready before returning, and flushes metrics', async () => {
    // Prepare
    const harness = memoryManager();
    const [first, second] = await startedJobs(harness, 2);
    const handler = createRepliesSqsHandler(harness);
    const event = anSqsEvent([
      anSqsReplyRecord(`${first}:hello`, '{"greeting":"hi"}', { attempt: 1 }),
      anSqsReplyRecord(`${second}:hello`, '{"greeting":"hey"}', { attempt: 1 }),
    ]);
    const context = aLambdaContext();

    // Act
    const response = await handler(event, context);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const byes = harness.bus.sent.filter((request) => request.step === 'bye');
    expect(byes.map((request) => request.jobId).sort()).toEqual([first, second].sort());
    expect(byes.find((request) => request.jobId === first)?.body).toEqual({ greeting: 'hi' });
    expect(harness.manager.outboxPending).toBe(0);
    expect(harness.telemetry.flushes).toBe(1);
    expect(harness.telemetry.contexts).toEqual([context]);
  });

  it('drops malformed replies without failing them, and counts and logs them', async () => {
    // Prepare
    const harness = memoryManager();
    const [job] = await startedJobs(harness, 1);
    const handler = createRepliesSqsHandler(harness);
    const noCorrelation = anSqsReplyRecord(undefined, '{}');
    const badCorrelation = anSqsReplyRecord('not-a-job', '{}');
    const good = anSqsReplyRecord(`${job}:hello`, '{}');

    // Act
    const response = await handler(anSqsEvent([noCorrelation, badCorrelation, good]));

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(harness.telemetry.counted('replies_malformed_total')).toBe(2);
    expect(harness.telemetry.logged('malformed reply ignored')).toHaveLength(2);
    expect(harness.bus.sent.filter((request) => request.step === 'bye')).toHaveLength(1);
  });

  it('reports only the messages the store failed for, and applies the others', async () => {
    // Prepare
    const base = memoryManager();
    const [healthy, broken] = await startedJobs(base, 2);
    const onlyBroken = failingStore(base.store, ['getJobs'], (args) =>
      (args[0] as string[]).includes(broken as string),
    );
    const isolated = memoryManager({ store: onlyBroken });
    const handler = createRepliesSqsHandler(isolated);
    const okRecord = anSqsReplyRecord(`${healthy}:hello`, '{}');
    const failedRecord = anSqsReplyRecord(`${broken}:hello`, '{}');

    // Act
    const response = await handler(anSqsEvent([okRecord, failedRecord]));

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: failedRecord.messageId }]);
    expect((await base.store.getJob(healthy as string))?.steps.get(0)?.status).toBe('completed');
    expect((await base.store.getJob(broken as string))?.steps.get(0)?.status).toBe('running');
    expect(
      isolated.telemetry.logged('message failed; it comes back after its visibility timeout'),
    ).toHaveLength(1);
  });

  it('applies the good replies of a batch with a poison reply in it, fails its attempt with the reason, and reports no failure', async () => {
    // Prepare
    const base = memoryManager();
    const [good, poisoned, alsoGood] = (await startedJobs(base, 3)) as [string, string, string];
    const harness = memoryManager({ store: storeRefusing(base.store, new Set()) });
    const handler = createRepliesSqsHandler(harness);
    const tooDeep = `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const records = [
      anSqsReplyRecord(`${good}:hello`, '{"n": 1}', { attempt: 1 }),
      anSqsReplyRecord(`${poisoned}:hello`, '{"poison": true}', { attempt: 1 }),
      anSqsReplyRecord(`${alsoGood}:hello`, tooDeep, { attempt: 1 }),
    ];

    // Act
    const response = await handler(anSqsEvent(records));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect((await base.store.getJob(good))?.steps.get(0)?.status).toBe('completed');
    expect(
      harness.bus.sent.filter((request) => request.step === 'bye').map((request) => request.jobId),
    ).toEqual([good]);
    expect((await base.store.getJob(poisoned))?.error?.message).toBe(
      'the reply could not be stored: RangeError: Maximum call stack size exceeded',
    );
    expect((await base.store.getJob(alsoGood))?.error?.message).toBe(
      'invalid reply: body is nested more than 64 levels deep (objects and lists)',
    );
  });

  it('fails every message during an outage, and applies each once when they come back', async () => {
    // Prepare
    const base = memoryManager();
    const [first, second] = await startedJobs(base, 2);
    const store = failingStore(base.store, ['getJobs', 'commit']);
    const harness = memoryManager({ store });
    const handler = createRepliesSqsHandler(harness);
    const records = [anSqsReplyRecord(`${first}:hello`, '{}'), anSqsReplyRecord(`${second}:hello`, '{}')];

    // Act
    const during = await handler(anSqsEvent(records));
    store.outage = false;
    const after = await handler(anSqsEvent(records));
    const again = await handler(anSqsEvent(records));

    // Assess
    expect(during.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(
      records.map((record) => record.messageId).sort(),
    );
    expect(after.batchItemFailures).toEqual([]);
    expect(again.batchItemFailures).toEqual([]);
    expect(harness.bus.sent.filter((request) => request.step === 'bye')).toHaveLength(2);
    expect(harness.telemetry.counted('replies_ignored_total')).toBe(2);
  });

  it('fails the batch items when DynamoDB keeps throttling (aws-sdk-client-mock)', async () => {
    // Prepare
    dynamodb.on(BatchGetItemCommand).rejects(
      Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
        name: 'ProvisionedThroughputExceededException',
        $fault: 'client',
      }),
    );
    const store = new DynamoDbStore({
      client: new DynamoDBClient({ region: 'us-east-1' }),
      tableName: 'switchyard-mocked',
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const harness = memoryManager({ store });
    const handler = createRepliesSqsHandler(harness);
    const jobId = '0b8a3e0e-7c1d-4f6e-9a57-1f2d3c4b5a69';
    const records = [anSqsReplyRecord(`${jobId}:hello`, '{}'), anSqsReplyRecord(`${jobId}:bye`, '{}')];

    // Act
    const response = await handler(anSqsEvent(records));

    // Assess
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(
      records.map((record) => record.messageId).sort(),
    );
    expect(dynamodb.commandCalls(BatchGetItemCommand).length).toBeGreaterThanOrEqual(3 * 2);
  });
});
