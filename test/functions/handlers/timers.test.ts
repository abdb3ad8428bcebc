import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import type { Store, Timer } from '../../../engine/index.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { encodeTimer, SqsTimers } from '../../../functions/adapters/sqs/timers.js';
import type { QueueMetricsReport } from '../../../functions/aws/queue-metrics.js';
import { createTimersHandler } from '../../../functions/handlers/timers.js';
import { anSqsEvent, anSqsRecord, aScheduledEvent } from '../../support/aws-events.js';
import { createSwitchyardTable, startDynamoDbLocal, uniqueTableName } from '../../support/dynamodb-local.js';
import { failingStore, type MemoryManager, memoryManager } from '../../support/memory-manager.js';

const workflow = {
  name: 'slow',
  steps: [{ name: 'wait', timeout: '30s', retries: 1 }],
};

/** A started job whose step waits for a reply, and the timer armed for its deadline. */
async function waitingJob(harness: MemoryManager): Promise<{ jobId: string; timer: Timer }> {
  await harness.manager.registerWorkflow(workflow);
  const { job } = await harness.manager.startJob({ workflow: 'slow' });
  await harness.manager.drain();
  const timer = harness.timers.armed.find((armed) => armed.jobId === job.id);
  if (!timer) throw new Error('no timer was armed');
  return { jobId: job.id, timer };
}

function timersHandler(harness: MemoryManager) {
  return createTimersHandler({
    manager: harness.manager,
    store: harness.store,
    timers: harness.timers,
    telemetry: harness.telemetry,
    clock: () => harness.now.value,
  });
}

/**
 * A handler stores a job and dies before its first request is sent; the timers handler of another
 * container, on `sweeperStore`, sweeps 30 s later and then at each of `sweepsAfterMs` after the crash.
 */
async function crashThenSweep(crashed: MemoryManager, sweeperStore: Store, sweepsAfterMs: number[]) {
  await crashed.manager.registerWorkflow({ name: 'plain', steps: [{ name: 'wait' }] });
  crashed.manager.stop();
  const { job } = await crashed.manager.startJob({ workflow: 'plain' });
  const unsent = crashed.bus.sent.length;
  const sweeper = memoryManager({ store: sweeperStore, start: crashed.now.value + 30_000 });
  const handler = timersHandler(sweeper);
  await handler(aScheduledEvent());
  const sentWhileYoung = sweeper.bus.sent.length;
  for (const afterMs of sweepsAfterMs) {
    sweeper.now.value = crashed.now.value + afterMs;
    await handler(aScheduledEvent());
  }
  return { job, unsent, sentWhileYoung, sent: sweeper.bus.sent.map((request) => request.correlationId) };
}

describe('Handler: timers', () => {
  describe('timer messages', () => {
    it('fires a due timer: the attempt times out and the retry is sent', async () => {
      // Prepare
      const harness = memoryManager();
      const { jobId, timer } = await waitingJob(harness);
      harness.now.value = timer.at;
      const record = anSqsRecord({ body: encodeTimer(timer), queue: 'Switchyard-switchyard-timers' });

      // Act
      const response = await timersHandler(harness)(anSqsEvent([record]));

      // Assess
      expect(response).toEqual({ batchItemFailures: [] });
      const retry = harness.bus.sent.find((request) => request.jobId === jobId && request.attempt === 2);
      expect(retry?.step).toBe('wait');
      expect(harness.telemetry.counted('timeouts_total')).toBe(1);
    });

    it('sends a timer that arrived early again, and fires nothing', async () => {
      // Prepare
      const harness = memoryManager();
      const { timer } = await waitingJob(harness);
      const far = { ...timer, at: harness.now.value + 3_600_000 };

      // Act
      const response = await timersHandler(harness)(anSqsEvent([anSqsRecord({ body: encodeTimer(far) })]));

      // Assess
      expect(response?.batchItemFailures).toEqual([]);
      expect(harness.timers.resent).toEqual([far]);
      expect(harness.bus.sent.filter((request) => request.attempt === 2)).toEqual([]);
    });

    it('drops a message that is not a timer, and ignores a stale timer', async () => {
      // Prepare
      const harness = memoryManager();
      const { timer } = await waitingJob(harness);
      const stale = { ...timer, attempt: 7 };
      harness.now.value = timer.at;

      // Act
      const response = await timersHandler(harness)(
        anSqsEvent([anSqsRecord({ body: 'not json' }), anSqsRecord({ body: encodeTimer(stale) })]),
      );

      // Assess
      expect(response?.batchItemFailures).toEqual([]);
      expect(harness.telemetry.logged('not a timer message; dropped')).toHaveLength(1);
      expect(harness.bus.sent.filter((request) => request.attempt === 2)).toEqual([]);
    });

    it('reports the early timer it could not send again, and still fires the due one', async () => {
      // Prepare
      const harness = memoryManager();
      const { jobId, timer } = await waitingJob(harness);
      harness.now.value = timer.at;
      harness.timers.failResend = true;
      const early = anSqsRecord({ body: encodeTimer({ ...timer, at: timer.at + 3_600_000 }) });
      const due = anSqsRecord({ body: encodeTimer(timer) });

      // Act
      const response = await timersHandler(harness)(anSqsEvent([early, due]));

      // Assess
      expect(response?.batchItemFailures).toEqual([{ itemIdentifier: early.messageId }]);
      expect(harness.bus.sent.some((request) => request.jobId === jobId && request.attempt === 2)).toBe(true);
    });

    it('reports an early timer SQS throttled when it was sent again (aws-sdk-client-mock)', async () => {
      // Prepare
      const harness = memoryManager();
      const { timer } = await waitingJob(harness);
      const client = new SQSClient({ region: 'us-east-1' });
      mockClient(client)
        .on(SendMessageBatchCommand)
        .rejects(Object.assign(new Error('Rate exceeded'), { name: 'RequestThrottled' }));
      const timers = new SqsTimers({ client, queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/timers' });
      const handler = createTimersHandler({ ...harness, timers, clock: () => harness.now.value });
      const early = anSqsRecord({ body: encodeTimer({ ...timer, at: timer.at + 3_600_000 }) });

      // Act
      const response = await handler(anSqsEvent([early]));

      // Assess
      expect(response?.batchItemFailures).toEqual([{ itemIdentifier: early.messageId }]);
    });

    it('reports a due timer the store could not take', async () => {
      // Prepare
      const base = memoryManager();
      const { timer } = await waitingJob(base);
      const harness = memoryManager({ store: failingStore(base.store, ['getJobs']), start: timer.at });
      const record = anSqsRecord({ body: encodeTimer(timer) });

      // Act
      const response = await timersHandler(harness)(anSqsEvent([record]));

      // Assess
      expect(response?.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    });
  });

  describe('the scheduled sweep', () => {
    it('fires the due timers it finds in the store, whatever became of their messages', async () => {
      // Prepare
      const harness = memoryManager();
      const { jobId, timer } = await waitingJob(harness);
      harness.now.value = timer.at + 1;

      // Act
      const response = await timersHandler(harness)(aScheduledEvent());

      // Assess
      expect(response).toBeUndefined();
      expect(harness.bus.sent.some((request) => request.jobId === jobId && request.attempt === 2)).toBe(true);
      expect(harness.telemetry.logged('timer sweep')[0]?.fields).toMatchObject({ fired: 1 });
    });

    it('measures and publishes the queue metrics at each sweep when given them (the RabbitMQ bus), logging queues it could not measure', async () => {
      // Prepare
      const harness = memoryManager();
      const published: QueueMetricsReport[] = [];
      const report: QueueMetricsReport = {
        queues: [{ queue: 'workflow-manager', depth: 3, consumers: 1 }],
        oldestUnsentSeconds: 0,
        unknown: [{ queue: 'book-split', error: 'vhost refused' }],
      };
      const handler = createTimersHandler({
        ...harness,
        clock: () => harness.now.value,
        queueMetrics: { measure: async () => report, publish: (measured) => published.push(measured) },
      });

      // Act
      await handler(aScheduledEvent());
      await handler(aScheduledEvent());

      // Assess
      expect(published).toEqual([report, report]);
      expect(harness.telemetry.logged('queues not measured')[0]?.fields).toEqual({
        queues: 'book-split: vhost refused',
      });
    });

    it('leaves timers that are not due alone', async () => {
      // Prepare
      const harness = memoryManager();
      const { timer } = await waitingJob(harness);
      harness.now.value = timer.at - 1;

      // Act
      await timersHandler(harness)(aScheduledEvent());

      // Assess
      expect(harness.bus.sent.filter((request) => request.attempt === 2)).toEqual([]);
    });

    it('sends again what a crashed handler stored but never sent, once it is a minute old', async () => {
      // Prepare
      const crashed = memoryManager();

      // Act
      const { job, unsent, sentWhileYoung, sent } = await crashThenSweep(crashed, crashed.store, [61_000]);

      // Assess
      expect(unsent).toBe(0);
      expect(sentWhileYoung).toBe(0);
      expect(sent).toEqual([`${job.id}:wait`]);
      expect((await crashed.store.pendingOutbox({ limit: 10 })).entries).toEqual([]);
    });

    it('on DynamoDB, sends again the first request of a job whose creation a crashed handler stored but never sent, once', async () => {
      // Prepare: the job's head is young, so it is found through the job listing, not gsi3.
      const dynamo = await startDynamoDbLocal();
      try {
        const tableName = uniqueTableName('timers-sweep');
        await createSwitchyardTable(dynamo.client, tableName);
        const crashed = memoryManager({ store: new DynamoDbStore({ client: dynamo.client, tableName }) });
        const sweeperStore = new DynamoDbStore({ client: dynamo.client, tableName });

        // Act
        const { job, unsent, sentWhileYoung, sent } = await crashThenSweep(
          crashed,
          sweeperStore,
          [61_000, 121_000],
        );

        // Assess
        expect(unsent).toBe(0);
        expect(sentWhileYoung).toBe(0);
        expect(sent).toEqual([`${job.id}:wait`]);
      } finally {
        await dynamo.stop();
      }
    });

    it('stops when the store keeps listing the same stale timers', async () => {
      // Prepare
      const harness = memoryManager();
      const stale: Timer = {
        jobId: '0b8a3e0e-7c1d-4f6e-9a57-1f2d3c4b5a69',
        step: 'gone',
        kind: 'attempt',
        attempt: 1,
        at: 1,
      };
      let listed = 0;
      harness.store.listTimers = async () => {
        listed++;
        return [stale];
      };
      const handler = createTimersHandler({ ...harness, sweepPageSize: 1, clock: () => harness.now.value });

      // Act
      await handler(aScheduledEvent());

      // Assess
      expect(listed).toBe(2);
    });
  });
});
