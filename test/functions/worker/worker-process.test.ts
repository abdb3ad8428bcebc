/**
 * `runWorker` as a process in every state a SIGTERM or a bad URL can find it in: exit code and time
 * to exit, measured here, on the shared RabbitMQ and on the SQS emulator.
 */
import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { AMQP_URL, deleteQueues, eventually, openTestChannel, uniqueName } from '../../support/rabbitmq.js';
import { type SdkWorkerProcess, spawnSdkWorker, type WorkerExit } from '../../support/sdk-worker-process.js';

let inspector: { model: ChannelModel; channel: Channel };
let sqs: Fauxqs;
const queuesToDelete = new Set<string>();
const processes: SdkWorkerProcess[] = [];

beforeAll(async () => {
  inspector = await openTestChannel();
  sqs = await startSqsEmulator();
});

afterEach(async () => {
  await Promise.all(processes.splice(0).map((worker) => worker.kill()));
});

afterAll(async () => {
  await inspector.model.close();
  await deleteQueues(queuesToDelete);
  await sqs.stop();
});

async function spawn(...args: Parameters<typeof spawnSdkWorker>): Promise<SdkWorkerProcess> {
  const worker = await spawnSdkWorker(...args);
  processes.push(worker);
  return worker;
}

function aQueue(): string {
  const queue = uniqueName('sdk-process');
  queuesToDelete.add(queue);
  return queue;
}

/** Sends SIGTERM (or `signal`) and measures how long the process takes to exit. */
async function terminate(
  worker: SdkWorkerProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<WorkerExit & { ms: number }> {
  const sentAt = Date.now();
  worker.child.kill(signal);
  const exit = await worker.exited;
  return { ...exit, ms: Date.now() - sentAt };
}

function sendRequest(queue: string, replyTo: string): string {
  const correlationId = `${randomUUID()}:step`;
  inspector.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
    correlationId,
    replyTo,
    deliveryMode: 2,
    headers: { 'x-attempt': 1 },
  });
  return correlationId;
}

const brokerWith = (credentials: string, path = ''): string =>
  `${AMQP_URL.replace(/\/\/[^@]*@/, `//${credentials}@`).replace(/\/$/, '')}${path}`;

describe('Function: runWorker, as a process on RabbitMQ', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('exits 0 at once on %s when idle', async (signal) => {
    const worker = await spawn(aQueue(), 'echo');

    const exit = await terminate(worker, signal);

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
  });

  it('hands back a request whose handler never returns, and exits 0 within its 10 s', async () => {
    // Prepare: a worker holding a request forever.
    const queue = aQueue();
    const replyTo = aQueue();
    await inspector.channel.assertQueue(replyTo, { durable: true });
    const holder = await spawn(queue, 'hold');
    const correlationId = sendRequest(queue, replyTo);
    await holder.waitFor('the request', (event) => event.correlationId === correlationId);

    // Act
    const exit = await terminate(holder);

    // Assess: gone within the bound; another worker gets the request and answers it.
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(15_000);
    expect(holder.stderr()).toMatch(/still running at the shutdown deadline; handing it back/);
    const echo = await spawn(queue, 'echo');
    await echo.waitFor('the request again', (event) => event.correlationId === correlationId);
  });

  it('exits 0 on SIGTERM while it retries an unreachable broker, having said so once', async () => {
    const worker = await spawn(aQueue(), 'echo', {
      ready: false,
      env: { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' },
    });
    await eventually('the worker to say the broker is not reachable', () =>
      /not reachable/.test(worker.stderr()),
    );
    // Several tries later (100 ms, 200 ms, 400 ms, ... apart), still one line about it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const exit = await terminate(worker);

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(15_000);
    expect(worker.stderr().match(/not reachable/g)).toHaveLength(1);
    expect(worker.stderr()).toMatch(
      /RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1 is not reachable \(connect ECONNREFUSED/,
    );
  });

  it.each([
    [
      'a wrong password',
      brokerWith('guest:n0t-the-p4ss'),
      /refused the login of user "guest" \(403 ACCESS_REFUSED\): check the user name and password/,
    ],
    [
      'an unknown vhost',
      brokerWith('guest:guest', '/no-such-vhost-for-sdk'),
      /refused the vhost "no-such-vhost-for-sdk" \(530 NOT_ALLOWED\): check that the vhost/,
    ],
  ])('exits 1 with one line when the broker refuses %s, without retrying', async (_, url, says) => {
    const startedAt = Date.now();
    const worker = await spawn(aQueue(), 'echo', { ready: false, env: { AMQP_URL: url } });

    const exit = await worker.exited;

    expect(exit).toMatchObject({ code: 1, signal: null });
    expect(Date.now() - startedAt).toBeLessThan(15_000);
    const lines = worker.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(says);
    expect(lines[0]).toMatch(/^sdk-process-\S+: cannot start: RabbitMQ at amqp:\/\//);
    expect(worker.stderr()).not.toContain('n0t-the-p4ss');
  });
});

describe('Function: runWorker, as a process on SQS', () => {
  async function sqsWorker(mode: 'hold' | 'echo', env: Record<string, string> = {}) {
    const prefix = uniqueQueuePrefix();
    const { url: queueUrl } = await createQueue(sqs.client, `${prefix}work`);
    const { url: replyQueueUrl } = await createQueue(sqs.client, `${prefix}replies`);
    const worker = await spawn('work', mode, {
      env: { WORKER_SQS_ENDPOINT: sqs.endpoint, WORKER_QUEUE_PREFIX: prefix, ...env },
    });
    return { worker, queueUrl, replyQueueUrl };
  }

  it('exits 0 at once on SIGTERM in the middle of a 20 s long poll', async () => {
    const { worker } = await sqsWorker('echo');
    await new Promise((resolve) => setTimeout(resolve, 500));

    const exit = await terminate(worker);

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
  });

  it('makes a request whose handler never returns visible again, and exits 0 within its 3 s', async () => {
    // Prepare
    const { worker, queueUrl, replyQueueUrl } = await sqsWorker('hold', {
      WORKER_SHUTDOWN_TIMEOUT_MS: '3000',
    });
    const correlationId = `${randomUUID()}:step`;
    await sqs.client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '{"n":1}',
        MessageAttributes: {
          correlation_id: { DataType: 'String', StringValue: correlationId },
          reply_to: { DataType: 'String', StringValue: replyQueueUrl },
        },
      }),
    );
    await worker.waitFor('the request', (event) => event.correlationId === correlationId);

    // Act
    const exit = await terminate(worker);

    // Assess: its visibility timeout (30 s) did not have to run out.
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(8_000);
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }),
    );
    expect(Messages.map((message) => message.MessageAttributes?.correlation_id?.StringValue)).toEqual([
      correlationId,
    ]);
  });
});
