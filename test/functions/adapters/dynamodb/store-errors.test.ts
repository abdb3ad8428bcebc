import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  InternalServerError,
  ProvisionedThroughputExceededException,
  QueryCommand,
  ThrottlingException,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../../engine/index.js';
import { StoreUnavailableError } from '../../../../engine/ports/store.js';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  DynamoDbRetriesExhaustedError,
  type RetryPolicy,
} from '../../../../functions/adapters/dynamodb/retry.js';
import { DynamoDbStore } from '../../../../functions/adapters/dynamodb/store.js';
import { aChild, aJob, aRequest, updating } from '../../../support/factories.js';

const meta = { $metadata: {} };
const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    ...meta,
  });
const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', ...meta });
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    CancellationReasons: codes.map((Code) => ({ Code })),
    ...meta,
  });

function mockedStore(retry: Partial<RetryPolicy> = {}): {
  store: DynamoDbStore;
  mock: ReturnType<typeof mockClient>;
  waits: number[];
} {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const mock = mockClient(client);
  const waits: number[] = [];
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: 4,
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...retry,
  };
  return { store: new DynamoDbStore({ client, tableName: 'mocked', retry: policy }), mock, waits };
}

/** A child's step update: the cheapest commit (one conditional UpdateItem, no reads before it). */
function childUpdate(): { child: JobRecord; commit: ReturnType<typeof updating> } {
  const child = aChild(aJob(), 'fan', 0);
  return { child, commit: updating(child, { ...child, rev: 2, updatedAt: 2_000 }) };
}

/** A child's update with an outbox entry: one transaction. */
function childTransaction(): ReturnType<typeof updating> {
  const child = aChild(aJob(), 'fan', 0);
  const next = { ...child, rev: 2 };
  return updating(child, next, {
    outbox: [{ id: 'entry', kind: 'request', jobId: child.id, createdAt: 5, request: aRequest(next) }],
  });
}

describe('Class: DynamoDbStore (error paths, mocked DynamoDB)', () => {
  describe('Method: commit', () => {
    it('retries a throttled conditional write, then succeeds', async () => {
      // Prepare
      const { store, mock, waits } = mockedStore();
      mock
        .on(UpdateItemCommand)
        .rejectsOnce(throttled())
        .rejectsOnce(new ThrottlingException({ message: 'slow down', ...meta }))
        .resolves({});

      // Act
      const results = await store.commit([childUpdate().commit]);

      // Assess
      expect(results).toEqual([{ ok: true }]);
      expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(3);
      // Full jitter (random 0.5) of 25 ms, then of 50 ms.
      expect(waits).toEqual([12, 25]);
    });

    it('retries a transaction cancelled by a conflict or throttling with a new token, one lost to a server error with the same', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock
        .on(TransactWriteItemsCommand)
        .rejectsOnce(cancelled('None', 'TransactionConflict'))
        .rejectsOnce(cancelled('ThrottlingError', 'None'))
        .rejectsOnce(new InternalServerError({ message: 'internal', ...meta }))
        .resolves({});

      // Act
      const results = await store.commit([childTransaction()]);

      // Assess
      expect(results).toEqual([{ ok: true }]);
      const calls = mock.commandCalls(TransactWriteItemsCommand);
      expect(calls).toHaveLength(4);
      const tokens = calls.map((call) => call.args[0].input.ClientRequestToken);
      expect(new Set(tokens.slice(0, 3)).size).toBe(3);
      expect(tokens[3]).toBe(tokens[2]);
    });

    it('turns a failed condition into a conflict, without retrying', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock.on(UpdateItemCommand).rejects(conditionFailed());

      // Act
      const results = await store.commit([childUpdate().commit]);

      // Assess
      expect(results).toEqual([{ ok: false, conflict: true }]);
      expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(1);
    });

    it('turns a transaction cancelled by the job’s condition into a conflict, without retrying', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock.on(TransactWriteItemsCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));

      // Act
      const results = await store.commit([childTransaction()]);

      // Assess
      expect(results).toEqual([{ ok: false, conflict: true }]);
      expect(mock.commandCalls(TransactWriteItemsCommand)).toHaveLength(1);
    });

    it('does not retry a transaction that both conflicts and fails its condition', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock.on(TransactWriteItemsCommand).rejects(cancelled('ConditionalCheckFailed', 'TransactionConflict'));

      // Act
      const results = await store.commit([childTransaction()]);

      // Assess
      expect(results).toEqual([{ ok: false, conflict: true }]);
      expect(mock.commandCalls(TransactWriteItemsCommand)).toHaveLength(1);
    });

    it('gives up after a bounded number of attempts, throwing the last error with a clear message', async () => {
      // Prepare
      const { store, mock, waits } = mockedStore({ maxAttempts: 5, maxDelayMs: 60 });
      mock.on(UpdateItemCommand).rejects(throttled());

      // Act
      const error = await store.commit([childUpdate().commit]).catch((caught: unknown) => caught);

      // Assess
      expect(error).toBeInstanceOf(DynamoDbRetriesExhaustedError);
      expect((error as Error).message).toBe(
        'DynamoDB UpdateItem still failed after 5 attempts (ProvisionedThroughputExceededException: Rate of requests exceeds the allowed throughput)',
      );
      expect((error as Error).cause).toBeInstanceOf(ProvisionedThroughputExceededException);
      expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(5);
      // Exponential, capped at 60 ms, jittered (random 0.5).
      expect(waits).toEqual([12, 25, 30, 30]);
    });

    it.each([
      ['ProvisionedThroughputExceededException', throttled],
      ['ThrottlingException', () => new ThrottlingException({ message: 'Rate exceeded', ...meta })],
      ['InternalServerError', () => new InternalServerError({ message: 'Internal server error', ...meta })],
      [
        'ServiceUnavailable',
        () => Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable' }),
      ],
    ])(
      'reports %s that outlasts its retries as the store being unavailable, naming it',
      async (name, error) => {
        // Prepare
        const { store, mock } = mockedStore({ maxAttempts: 2 });
        mock.on(UpdateItemCommand).rejects(error());

        // Act
        const caught = await store.commit([childUpdate().commit]).catch((thrown: unknown) => thrown);

        // Assess
        expect(caught).toBeInstanceOf(StoreUnavailableError);
        expect((caught as Error).message).toContain(`still failed after 2 attempts (${name}: `);
      },
    );

    it('throws an error that is neither throttling nor a condition at once', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      const invalid = Object.assign(new Error('One or more parameter values were invalid'), {
        name: 'ValidationException',
      });
      mock.on(UpdateItemCommand).rejects(invalid);

      // Act
      const error = await store.commit([childUpdate().commit]).catch((caught: unknown) => caught);

      // Assess
      expect(error).toBe(invalid);
      expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(1);
    });
  });

  describe('Method: ackOutbox and getJobs (batch calls)', () => {
    it('writes unprocessed items again until none are left', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock
        .on(BatchWriteItemCommand)
        .callsFakeOnce((input) => ({ UnprocessedItems: { mocked: input.RequestItems.mocked.slice(1) } }))
        .resolves({});

      // Act
      await store.ackOutbox(['a', 'b', 'c']);

      // Assess
      const calls = mock.commandCalls(BatchWriteItemCommand);
      expect(
        calls.map((call) =>
          call.args[0].input.RequestItems?.mocked?.map((request) => request.DeleteRequest?.Key?.pk?.S),
        ),
      ).toEqual([
        ['OUT#a', 'OUT#b', 'OUT#c'],
        ['OUT#b', 'OUT#c'],
      ]);
    });

    it('reads unprocessed keys again until none are left', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      const job = aJob();
      const item = {
        pk: { S: `JOB#${job.id}` },
        sk: { S: 'J' },
        rev: { N: '1' },
        j: { S: JSON.stringify(job) },
      };
      mock
        .on(BatchGetItemCommand)
        .resolvesOnce({
          Responses: { mocked: [] },
          UnprocessedKeys: { mocked: { Keys: [{ pk: item.pk, sk: item.sk }], ConsistentRead: true } },
        })
        .resolves({ Responses: { mocked: [item] } });

      // Act
      const jobs = await store.getJobs([job.id]);

      // Assess
      expect(jobs.get(job.id)).toEqual(job);
      expect(mock.commandCalls(BatchGetItemCommand)).toHaveLength(2);
    });

    it('gives up when items stay unprocessed, saying how many', async () => {
      // Prepare
      const { store, mock } = mockedStore({ maxAttempts: 3 });
      mock.on(BatchWriteItemCommand).callsFake((input) => ({ UnprocessedItems: input.RequestItems }));

      // Act
      const error = await store.ackOutbox(['a', 'b']).catch((caught: unknown) => caught);

      // Assess
      expect((error as Error).message).toBe(
        'DynamoDB BatchWriteItem still failed after 3 attempts (Error: 2 item(s) still unprocessed (throttled))',
      );
      expect(mock.commandCalls(BatchWriteItemCommand)).toHaveLength(3);
    });
  });

  describe('Method: countJobs', () => {
    it('counts waiting and running jobs across pages of their listing partitions, retrying a throttled page', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      const pages = new Map<string, number>();
      let throttledOnce = false;
      mock.on(QueryCommand).callsFake((input) => {
        const partition = input.ExpressionAttributeValues[':p'].S as string;
        if (partition === 'L#wf#running#2' && !throttledOnce) {
          throttledOnce = true;
          throw throttled();
        }
        const page = pages.get(partition) ?? 0;
        pages.set(partition, page + 1);
        return page < 2
          ? { Count: 2, LastEvaluatedKey: { pk: { S: `page-${page}` } } }
          : { Count: partition.includes('#waiting#') ? 0 : 1 };
      });
      mock.on(BatchGetItemCommand).resolves({
        Responses: {
          mocked: [
            { pk: { S: 'CNT#01' }, sk: { S: 'wf' }, completed: { N: '7' }, running: { N: '40' } },
            { pk: { S: 'CNT#05' }, sk: { S: 'wf' }, completed: { N: '1' }, failed: { N: '2' } },
          ],
        },
      });

      // Act
      const counts = await store.countJobs('wf');

      // Assess
      // Scheduled, pending, queued and paused jobs are counted from their listing partitions too (the mock answers them as running ones).
      expect(counts).toEqual({
        scheduled: 20,
        pending: 20,
        waiting: 16,
        queued: 20,
        running: 20,
        paused: 20,
        completed: 8,
        failed: 2,
        cancelled: 0,
        aborted: 0,
      });
      const selects = mock.commandCalls(QueryCommand).map((call) => call.args[0].input.Select);
      expect(new Set(selects)).toEqual(new Set(['COUNT']));
    });
  });

  describe('Method: ping', () => {
    it('retries a throttled read, and rejects once the store is closed', async () => {
      // Prepare
      const { store, mock } = mockedStore();
      mock.on(GetItemCommand).rejectsOnce(throttled()).resolves({});

      // Act
      await store.ping();
      await store.close();

      // Assess
      expect(mock.commandCalls(GetItemCommand)).toHaveLength(2);
      await expect(store.ping()).rejects.toThrow('the store is closed');
    });
  });
});

describe('Function: backoffDelay', () => {
  it('waits a random share of an exponentially growing, capped ceiling', () => {
    const policy: RetryPolicy = { maxAttempts: 8, baseDelayMs: 10, maxDelayMs: 100 };
    expect(
      [0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, { ...policy, random: () => 0.999 })),
    ).toEqual([9, 19, 39, 79, 99, 99]);
    expect(backoffDelay(3, { ...policy, random: () => 0 })).toBe(0);
  });
});
