import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type WorkerLogger } from '../../../functions/worker/index.js';
import { BrokerRefusedError } from '../../../functions/worker/transports/broker-refusal.js';
import { SqsWorkerTransport } from '../../../functions/worker/transports/sqs.js';
import { createQueue, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { AMQP_URL, deleteQueues, eventually, openTestChannel, uniqueName } from '../../support/rabbitmq.js';

let inspector: { model: ChannelModel; channel: Channel };
const queuesToDelete = new Set<string>();

beforeAll(async () => {
  inspector = await openTestChannel();
});

afterAll(async () => {
  await inspector.model.close();
  await deleteQueues(queuesToDelete);
});

function recordingLogger(): { logger: WorkerLogger; lines: string[] } {
  const lines: string[] = [];
  const record = (message: string): void => {
    lines.push(message);
  };
  return { logger: { info: record, warn: record, error: record }, lines };
}

function aQueue(): string {
  const queue = uniqueName('sdk-shutdown');
  queuesToDelete.add(queue);
  return queue;
}

describe('Function: createWorker, starting and stopping', () => {
  it('rejects start with a BrokerRefusedError for a wrong password, after one try', async () => {
    const { logger, lines } = recordingLogger();
    const worker = createWorker({
      queue: aQueue(),
      amqpUrl: AMQP_URL.replace(/\/\/[^@]*@/, '//guest:n0t-the-p4ss@'),
      logger,
      handler: () => ({}),
    });

    const failure = await worker.start().catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(BrokerRefusedError);
    expect((failure as BrokerRefusedError).refused).toBe('login');
    expect(lines).toEqual([]);
    await worker.stop();
  });

  it('stops within its shutdownTimeoutMs while still connecting to an unreachable broker', async () => {
    const { logger, lines } = recordingLogger();
    const worker = createWorker({
      queue: aQueue(),
      amqpUrl: 'amqp://guest:guest@127.0.0.1:1',
      logger,
      shutdownTimeoutMs: 1_000,
      handler: () => ({}),
    });
    const starting = worker.start().catch((error: unknown) => error);
    await eventually('the outage to be said', () => lines.some((line) => /not reachable/.test(line)));

    const stoppedAt = Date.now();
    await worker.stop();

    // shutdownTimeoutMs (1 s) and room for a loaded machine; the default is 10 s.
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    expect(String(await starting)).toMatch(/the worker was stopped before it consumed its queue/);
  });

  it('hands back a request whose handler outlives shutdownTimeoutMs, and drops its late result', async () => {
    // Prepare: a handler that answers only when told to, long after the stop.
    const queue = aQueue();
    const replyQueue = aQueue();
    await inspector.channel.assertQueue(replyQueue, { durable: true });
    const replies: ConsumeMessage[] = [];
    await inspector.channel.consume(replyQueue, (message) => message && replies.push(message), {
      noAck: true,
    });
    let release: (() => void) | undefined;
    const { logger, lines } = recordingLogger();
    const worker = createWorker({
      queue,
      amqpUrl: AMQP_URL,
      logger,
      shutdownTimeoutMs: 1_000,
      handler: () => new Promise((resolve) => (release = () => resolve({ late: true }))),
    });
    await worker.start();
    const correlationId = `${randomUUID()}:step`;
    inspector.channel.sendToQueue(queue, Buffer.from('{}'), { correlationId, replyTo: replyQueue });
    await eventually('the handler to run', () => release !== undefined);

    // Act
    const stoppedAt = Date.now();
    await worker.stop();
    const stopMs = Date.now() - stoppedAt;
    release?.();

    // Assess: the request is back in the queue, and no reply went out for it.
    expect(stopMs).toBeLessThan(3_000);
    const again = await eventually('the request back in the queue', async () => {
      const message = await inspector.channel.get(queue, { noAck: true });
      return message || undefined;
    });
    expect(again.properties.correlationId).toBe(correlationId);
    await eventually('the late result to be dropped', () =>
      lines.some((line) => /dropping its reply/.test(line)),
    );
    expect(replies).toEqual([]);
  });

  it('does not go on to consume when stopped while its SQS transport looks up the queue', async () => {
    // Prepare
    const sqs = await startSqsEmulator();
    try {
      const prefix = uniqueQueuePrefix();
      const { url: queueUrl } = await createQueue(sqs.client, `${prefix}work`);
      const handled: string[] = [];
      const worker = createWorker({
        queue: 'work',
        transport: new SqsWorkerTransport({
          client: sqs.newClient(),
          queuePrefix: prefix,
          waitTimeSeconds: 1,
        }),
        logger: recordingLogger().logger,
        handler: (_, { correlationId }) => {
          handled.push(correlationId);
          return {};
        },
      });

      // Act: stop in the same turn as start, before GetQueueUrl answers; then a request arrives.
      const starting = worker.start().catch((error: unknown) => error);
      await worker.stop();
      await sqs.client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: '{}',
          MessageAttributes: {
            correlation_id: { DataType: 'String', StringValue: `${randomUUID()}:step` },
            reply_to: { DataType: 'String', StringValue: queueUrl },
          },
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      // Assess: the start fails, and the request is still there for another worker.
      expect(String(await starting)).toMatch(/stopped before it consumed its queue/);
      expect(handled).toEqual([]);
      const { Messages = [] } = await sqs.client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
      expect(Messages).toHaveLength(1);
    } finally {
      await sqs.stop();
    }
  });
});
