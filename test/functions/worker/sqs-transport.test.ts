import { randomUUID } from 'node:crypto';
import {
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UndeliverableError } from '../../../engine/ports/bus.js';
import { parseSqsReply } from '../../../functions/adapters/sqs/reply.js';
import type { WorkerDelivery } from '../../../functions/transport/worker-transport.js';
import { createWorker, WorkerError } from '../../../functions/worker/index.js';
import { SqsWorkerTransport } from '../../../functions/worker/transports/sqs.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

let sqs: Fauxqs;
const transports: SqsWorkerTransport[] = [];

beforeAll(async () => {
  sqs = await startSqsEmulator();
});

afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

afterAll(async () => {
  await sqs.stop();
});

interface Setup {
  prefix: string;
  queueUrl: string;
  replyQueueUrl: string;
  errors: Error[];
  client: SQSClient;
  transport: SqsWorkerTransport;
}

async function setUp(options: { rejectVisibilityTimeoutSeconds?: number } = {}): Promise<Setup> {
  const prefix = uniqueQueuePrefix();
  const { url: queueUrl } = await createQueue(sqs.client, `${prefix}work`);
  const { url: replyQueueUrl } = await createQueue(sqs.client, `${prefix}replies`);
  const errors: Error[] = [];
  const client = sqs.newClient();
  const transport = new SqsWorkerTransport({
    client,
    queuePrefix: prefix,
    onError: (error) => errors.push(error),
    ...options,
  });
  transports.push(transport);
  return { prefix, queueUrl, replyQueueUrl, errors, client, transport };
}

/** Sends a request the way the manager's SQS bus does. */
async function sendRequest(setup: Setup, body: string, attempt = 1): Promise<string> {
  const correlationId = `${randomUUID()}:count`;
  const attributes: Record<string, MessageAttributeValue> = {
    correlation_id: { DataType: 'String', StringValue: correlationId },
    reply_to: { DataType: 'String', StringValue: setup.replyQueueUrl },
    attempt: { DataType: 'Number', StringValue: String(attempt) },
  };
  await sqs.client.send(
    new SendMessageCommand({ QueueUrl: setup.queueUrl, MessageBody: body, MessageAttributes: attributes }),
  );
  return correlationId;
}

async function receiveOne(queueUrl: string): Promise<Message> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }),
    );
    if (Messages[0]) return Messages[0];
  }
  throw new Error(`no message arrived on ${queueUrl} within 10 s`);
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function queueDepth(setup: Setup): { ready: number; inflight: number } {
  const queue = sqs.server.inspectQueue(`${setup.prefix}work`);
  if (!queue) throw new Error('the work queue is gone');
  return { ready: queue.messages.ready.length, inflight: queue.messages.inflight.length };
}

describe('Class: SqsWorkerTransport', () => {
  describe('Method: consume', () => {
    it('delivers a request, sends the reply to reply_to, and deletes the request on ack', async () => {
      // Prepare
      const setup = await setUp();
      const correlationId = await sendRequest(setup, '{"text":"a b c"}', 2);
      const deliveries: WorkerDelivery[] = [];

      // Act
      await setup.transport.consume('work', 1, async (delivery) => {
        deliveries.push(delivery);
        await setup.transport.reply(delivery.replyTo, delivery.correlationId, '{"count":3}');
        await delivery.ack();
      });

      // Assess
      const reply = await receiveOne(setup.replyQueueUrl);
      expect(reply.Body).toBe('{"count":3}');
      expect(reply.MessageAttributes).toEqual({
        correlation_id: { DataType: 'String', StringValue: correlationId },
      });
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        correlationId,
        replyTo: setup.replyQueueUrl,
        body: '{"text":"a b c"}',
        attempt: 2,
        deliveryCount: 1,
      });
      await waitFor('the request to be deleted', () => queueDepth(setup).inflight === 0);
      expect(queueDepth(setup)).toEqual({ ready: 0, inflight: 0 });
      expect(setup.errors).toEqual([]);
    });

    it('delivers a rejected request again, with its delivery count increased', async () => {
      // Prepare
      const setup = await setUp();
      await sendRequest(setup, '{}');
      const counts: (number | undefined)[] = [];

      // Act
      await setup.transport.consume('work', 1, async (delivery) => {
        counts.push(delivery.deliveryCount);
        if (counts.length === 1) await delivery.reject();
        else await delivery.ack();
      });

      // Assess
      await waitFor('the second delivery', () => counts.length === 2);
      expect(counts).toEqual([1, 2]);
      await waitFor('the request to be deleted', () => queueDepth(setup).inflight === 0);
      expect(queueDepth(setup)).toEqual({ ready: 0, inflight: 0 });
    });

    it('has at most `concurrency` requests in hand, and leaves the rest in the queue', async () => {
      // Prepare
      const setup = await setUp();
      await Promise.all(Array.from({ length: 10 }, () => sendRequest(setup, '{}')));
      let inHand = 0;
      let mostInHand = 0;
      let handled = 0;
      const releases: (() => void)[] = [];

      // Act
      await setup.transport.consume('work', 3, async (delivery) => {
        inHand++;
        mostInHand = Math.max(mostInHand, inHand);
        await new Promise<void>((resolve) => releases.push(resolve));
        inHand--;
        handled++;
        await delivery.ack();
      });
      await waitFor('three requests in hand', () => inHand === 3);
      const whileFull = queueDepth(setup);
      const releaseAll = setInterval(() => {
        for (const release of releases.splice(0)) release();
      }, 5);
      await waitFor('all ten handled', () => handled === 10).finally(() => clearInterval(releaseAll));

      // Assess
      expect(whileFull).toEqual({ ready: 7, inflight: 3 });
      expect(mostInHand).toBe(3);
      await waitFor('every request deleted', () => queueDepth(setup).inflight === 0);
      expect(queueDepth(setup)).toEqual({ ready: 0, inflight: 0 });
    });

    it('does not hand over a request without correlation_id or reply_to, and reports it', async () => {
      // Prepare
      const setup = await setUp();
      await sqs.client.send(new SendMessageCommand({ QueueUrl: setup.queueUrl, MessageBody: '{}' }));
      const deliveries: WorkerDelivery[] = [];

      // Act
      await setup.transport.consume('work', 1, async (delivery) => {
        deliveries.push(delivery);
      });

      // Assess
      await waitFor('the error report', () => setup.errors.length > 0);
      expect(setup.errors[0]?.message).toMatch(/has no correlation_id or reply_to attribute: not handled$/);
      expect(deliveries).toEqual([]);
    });

    it('fails with a clear message when the queue does not exist', async () => {
      // Prepare
      const setup = await setUp();

      // Act
      const consuming = setup.transport.consume('absent', 1, async () => {});

      // Assess
      await expect(consuming).rejects.toThrow(
        `the SQS queue ${setup.prefix}absent does not exist (is the queue prefix right?)`,
      );
    });
  });

  describe('Method: reply', () => {
    it('marks error replies with `type` and `attempt`, and sends an empty heartbeat as null', async () => {
      // Prepare
      const setup = await setUp();
      const correlationId = `${randomUUID()}:count`;

      // Act
      await setup.transport.reply(setup.replyQueueUrl, correlationId, '{"error":"boom"}', {
        type: 'error',
        attempt: 3,
      });
      const error = await receiveOne(setup.replyQueueUrl);
      await setup.transport.reply(setup.replyQueueUrl, correlationId, '', { type: 'heartbeat' });
      const heartbeat = await receiveOne(setup.replyQueueUrl);

      // Assess
      expect(error.Body).toBe('{"error":"boom"}');
      expect(error.MessageAttributes).toEqual({
        correlation_id: { DataType: 'String', StringValue: correlationId },
        type: { DataType: 'String', StringValue: 'error' },
        attempt: { DataType: 'Number', StringValue: '3' },
      });
      expect(heartbeat.Body).toBe('null');
      expect(heartbeat.MessageAttributes?.type).toEqual({ DataType: 'String', StringValue: 'heartbeat' });
    });

    it('marks an error reply not retryable with the attribute x-retryable = false, and only then', async () => {
      // Prepare
      const setup = await setUp();
      const correlationId = `${randomUUID()}:count`;

      // Act
      await setup.transport.reply(setup.replyQueueUrl, correlationId, '{"error":"bad"}', {
        type: 'error',
        retryable: false,
      });
      const marked = await receiveOne(setup.replyQueueUrl);
      await setup.transport.reply(setup.replyQueueUrl, correlationId, '{"error":"flaky"}', { type: 'error' });
      const unmarked = await receiveOne(setup.replyQueueUrl);

      // Assess
      expect(marked.MessageAttributes?.['x-retryable']).toEqual({ DataType: 'String', StringValue: 'false' });
      expect(unmarked.MessageAttributes?.['x-retryable']).toBeUndefined();
    });

    it('refuses a reply over 1 MiB with a clear message', async () => {
      // Prepare
      const setup = await setUp();
      const correlationId = `${randomUUID()}:count`;

      // Act
      const replying = setup.transport.reply(setup.replyQueueUrl, correlationId, 'x'.repeat(1_048_576));

      // Assess
      await expect(replying).rejects.toBeInstanceOf(UndeliverableError);
      await expect(replying).rejects.toThrow(
        `the reply to ${correlationId} is ${1_048_576 + 'correlation_id'.length + 'String'.length + correlationId.length} ` +
          'bytes (body and message attributes), over the SQS limit of 1048576 bytes (1 MiB); it was not sent',
      );
    });
  });

  describe('Method: stopConsuming', () => {
    it('ends a long poll at once and takes no request after it', async () => {
      // Prepare
      const setup = await setUp();
      const deliveries: WorkerDelivery[] = [];
      const sendSpy = vi.spyOn(setup.client, 'send');
      await setup.transport.consume('work', 2, async (delivery) => {
        deliveries.push(delivery);
      });
      await waitFor('the long poll to start', () =>
        sendSpy.mock.calls.some(([command]) => command instanceof ReceiveMessageCommand),
      );

      // Act
      const startedAt = Date.now();
      await setup.transport.stopConsuming();
      const stoppedInMs = Date.now() - startedAt;
      await sendRequest(setup, '{}');

      // Assess
      expect(stoppedInMs).toBeLessThan(2_000);
      const { Messages = [] } = await sqs.client.send(
        new ReceiveMessageCommand({ QueueUrl: setup.queueUrl, WaitTimeSeconds: 1 }),
      );
      expect(Messages).toHaveLength(1);
      expect(deliveries).toEqual([]);
    });
  });
});

describe('Function: createWorker on SQS, with the manager reading its replies', () => {
  /** A job whose step has retries: 3; its request goes through SQS to an SDK worker whose handler throws `error`. */
  async function failOnce(error: WorkerError) {
    const setup = await setUp();
    const world = new SimulatedWorld();
    await world.register(
      'workflows:\n  - name: bill\n    steps:\n      - { name: charge, queue: work, retries: 3 }\n',
    );
    const id = await world.start('bill', { invoice: 7 });
    const [request] = world.take();
    const worker = createWorker({
      queue: 'work',
      transport: setup.transport,
      logger: { info() {}, warn() {}, error() {} },
      handler: () => {
        throw error;
      },
    });
    await worker.start();
    await sqs.client.send(
      new SendMessageCommand({
        QueueUrl: setup.queueUrl,
        MessageBody: JSON.stringify(request?.body),
        MessageAttributes: {
          correlation_id: { DataType: 'String', StringValue: request?.correlationId },
          reply_to: { DataType: 'String', StringValue: setup.replyQueueUrl },
          attempt: { DataType: 'Number', StringValue: String(request?.attempt) },
        },
      }),
    );
    const reply = await receiveOne(setup.replyQueueUrl);
    await worker.stop();
    await world.deliver([parseSqsReply(reply)]);
    return { world, job: await world.job(id) };
  }

  it('a WorkerError with retryable: false fails the step and the job at once, whatever its retries', async () => {
    // Act
    const { world, job } = await failOnce(new WorkerError('invoice 7 does not exist', { retryable: false }));

    // Assess
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'charge', attempt: 1, message: 'invoice 7 does not exist' });
    expect(stepsOf(job).charge).toMatchObject({ status: 'failed', attempts: 1 });
    expect(world.take()).toEqual([]);
  });

  it('a plain WorkerError fails the attempt only: the manager retries the step', async () => {
    // Act
    const { world, job } = await failOnce(new WorkerError('the bank is busy'));

    // Assess
    expect(stepsOf(job).charge).toMatchObject({ status: 'running', error: 'the bank is busy' });
    expect(world.take().map((request) => request.attempt)).toEqual([2]);
  });
});
