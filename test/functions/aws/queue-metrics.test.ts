import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { RabbitMqBus } from '../../../functions/adapters/rabbitmq/bus.js';
import { measureQueues } from '../../../functions/aws/queue-metrics.js';
import { publishQueueMetrics } from '../../../functions/aws/queue-metrics-emf.js';
import { silentTelemetry } from '../../../functions/telemetry/telemetry.js';
import { memoryManager } from '../../support/memory-manager.js';
import { AMQP_URL, deleteQueues, openTestChannel, uniqueName } from '../../support/rabbitmq.js';

describe('Function: measureQueues (RabbitMQ 4 on Amazon MQ publishes no per-queue metrics)', () => {
  const step = uniqueName('metrics-step');
  const reply = uniqueName('metrics-reply');
  const bus = new RabbitMqBus({
    url: AMQP_URL,
    connectionName: uniqueName('metrics'),
    logger: silentTelemetry.logger,
  });
  afterAll(async () => {
    await bus.close();
    await deleteQueues([step, reply]);
  });

  it('measures the manager’s queues and every step queue of the registered workflows', async () => {
    // Prepare: a workflow whose step queue holds 3 requests and has one consumer; the reply queue
    // exists and is empty; the parked queue was never declared.
    const harness = memoryManager({ start: Date.parse('2026-05-07T12:00:00Z') });
    await harness.manager.registerWorkflow({ name: 'metrics', steps: [{ name: 'count', queue: step }] });
    const { model, channel } = await openTestChannel();
    await channel.assertQueue(step);
    await channel.assertQueue(reply);
    for (let i = 0; i < 3; i++) channel.sendToQueue(step, Buffer.from('{}'));
    const consumer = await model.createChannel();
    await consumer.prefetch(1);
    await consumer.consume(step, () => {}, { noAck: false });

    try {
      // Act
      const report = await measureQueues({
        registry: harness.store,
        bus,
        outbox: harness.store,
        managerQueues: [reply, `${reply}.parked`],
        clock: () => harness.now.value,
      });

      // Assess: the consumer holds one request unacknowledged (prefetch 1): 2 are still ready.
      expect(report.unknown).toEqual([]);
      expect(report.queues).toEqual([
        { queue: reply, depth: 0, consumers: 0 },
        { queue: `${reply}.parked`, depth: 0, consumers: 0 },
        { queue: step, depth: 2, consumers: 1 },
      ]);
      expect(report.oldestUnsentSeconds).toBe(0);
    } finally {
      await model.close();
    }
  });

  it('tells the age of the oldest request the manager stored and has not sent', async () => {
    // Prepare: the outbox's oldest entry was stored 90 s ago (a send that keeps failing).
    const now = Date.parse('2026-05-07T12:00:00Z');
    const harness = memoryManager({ start: now });
    const outbox = {
      pendingOutbox: async () => ({
        entries: [
          { id: 'o1', kind: 'followUp' as const, jobId: 'j', createdAt: now - 90_500, followUp: {} as never },
        ],
      }),
    };

    // Act
    const report = await measureQueues({
      registry: harness.store,
      bus: {},
      outbox,
      managerQueues: [],
      clock: () => now,
    });

    // Assess: a bus that cannot look at its queues measures none.
    expect(report).toEqual({ queues: [], oldestUnsentSeconds: 90, unknown: [] });
  });
});

describe('Function: publishQueueMetrics', () => {
  let written: string[];
  let spy: MockInstance;
  beforeEach(() => {
    written = [];
    spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => spy.mockRestore());

  it('writes one EMF line per figure: each queue under its own Queue dimension, beside service', () => {
    // Act
    publishQueueMetrics(new Metrics({ namespace: 'Switchyard', serviceName: 'switchyard' }), {
      queues: [{ queue: 'workflow-manager', depth: 12, consumers: 1 }],
      oldestUnsentSeconds: 30,
      unknown: [],
    });

    // Assess
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ QueueDepth: 12, Queue: 'workflow-manager', service: 'switchyard' }),
      expect.objectContaining({ QueueConsumers: 1, Queue: 'workflow-manager', service: 'switchyard' }),
      expect.objectContaining({ OldestUnsentRequestAge: 30, service: 'switchyard' }),
    ]);
    const dimensions = lines.map(
      (line) =>
        (line._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]?.Dimensions,
    );
    expect(dimensions).toEqual([[['service', 'Queue']], [['service', 'Queue']], [['service']]]);
  });
});
