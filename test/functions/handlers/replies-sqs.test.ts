import { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import type { ReplyPoisonQueue } from '../../../functions/aws/sqs-poison-queue.js';
import { createRepliesSqsHandler } from '../../../functions/handlers/replies-sqs.js';
import { MAX_CRASHES_IN_HAND, poisonedReason } from '../../../functions/manager/reply-policy.js';
import { aLambdaContext, anSqsEvent, anSqsReplyRecord } from '../../support/aws-events.js';
import { failingStore, managerDyingOn, memoryManager, storeRefusing } from '../../support/memory-manager.js';

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

  it('poisons a reply its earlier containers died with: fails its attempt without retry, moves it to the poison queue, and applies the rest', async () => {
    // Prepare: the batch that brought it died, then two containers that had it alone.
    const harness = memoryManager();
    const [victim, bystander] = (await startedJobs(harness, 2)) as [string, string];
    const killer = (receiveCount: number) =>
      anSqsReplyRecord(`${victim}:hello`, '{"explode": true}', {
        attempt: 1,
        receiveCount,
        messageId: 'killer',
      });
    const dying = {
      ...harness,
      manager: managerDyingOn(harness.manager, (reply) => reply.body.includes('explode')),
    };
    void createRepliesSqsHandler(dying)(
      anSqsEvent([killer(1), anSqsReplyRecord(`${bystander}:hello`, '{}')]),
    );
    for (const receiveCount of [2, 3]) {
      void createRepliesSqsHandler(dying)(anSqsEvent([killer(receiveCount)]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const poisonQueue = recordingPoisonQueue();
    const handler = createRepliesSqsHandler({ ...dying, poisonQueue });
    const bystanderAgain = anSqsReplyRecord(`${bystander}:hello`, '{}', { attempt: 1, receiveCount: 2 });

    // Act
    const response = await handler(anSqsEvent([killer(4), bystanderAgain]), aLambdaContext());

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(poisonQueue.held.map(({ record, reason }) => ({ messageId: record.messageId, reason }))).toEqual([
      { messageId: 'killer', reason: poisonedReason(MAX_CRASHES_IN_HAND) },
    ]);
    expect(await harness.store.getJob(victim)).toMatchObject({
      status: 'failed',
      error: { step: 'hello', attempt: 1, message: poisonedReason(MAX_CRASHES_IN_HAND) },
    });
    expect((await harness.store.getJob(bystander))?.steps.get(0)?.status).toBe('completed');
    expect(harness.telemetry.counted('replies_poisoned_total')).toBe(1);
  });

  it('hands a poisoned reply back when the poison queue does not take it', async () => {
    // Prepare
    const harness = memoryManager();
    const [victim] = (await startedJobs(harness, 1)) as [string];
    const killer = (receiveCount: number) =>
      anSqsReplyRecord(`${victim}:hello`, '{"explode": true}', { receiveCount, messageId: 'killer' });
    const dying = {
      ...harness,
      manager: managerDyingOn(harness.manager, (reply) => reply.body.includes('explode')),
    };
    for (const receiveCount of [2, 3]) {
      void createRepliesSqsHandler(dying)(anSqsEvent([killer(receiveCount)]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const refusing: ReplyPoisonQueue = {
      hold: async () => {
        throw new Error('AccessDenied');
      },
    };

    // Act
    const response = await createRepliesSqsHandler({ ...dying, poisonQueue: refusing })(
      anSqsEvent([killer(4)]),
    );

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'killer' }] });
    expect((await harness.store.getJob(victim))?.status).toBe('failed');
  });
});

function recordingPoisonQueue(): ReplyPoisonQueue & { held: { record: SQSRecord; reason: string }[] } {
  const held: { record: SQSRecord; reason: string }[] = [];
  return {
    held,
    async hold(records) {
      held.push(...records);
    },
  };
}
