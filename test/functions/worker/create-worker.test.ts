import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortJob,
  abort,
  awaitCallback,
  createWorker,
  SuspendStep,
  suspend,
  type Worker,
  type WorkerContext,
  WorkerError,
  type WorkerLogger,
  type WorkerOptions,
} from '../../../functions/worker/index.js';
import {
  AMQP_URL,
  closeConnectionsNamed,
  deleteQueues,
  eventually,
  openTestChannel,
  queueCounts,
  uniqueName,
} from '../../support/rabbitmq.js';

const silent: WorkerLogger = { info: () => {}, warn: () => {}, error: () => {} };

let inspector: { model: ChannelModel; channel: Channel };
const queuesToDelete = new Set<string>();
const workersToStop: Worker[] = [];

beforeAll(async () => {
  inspector = await openTestChannel();
});

afterEach(async () => {
  await Promise.all(workersToStop.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await inspector.model.close();
  await deleteQueues(queuesToDelete);
});

interface Fixture {
  queue: string;
  replyQueue: string;
  replies: ConsumeMessage[];
  worker: Worker;
}

/** A worker on a fresh step queue, and a reply queue whose messages land in `replies`. */
async function aWorker(options: Omit<WorkerOptions, 'queue' | 'amqpUrl' | 'logger'>): Promise<Fixture> {
  const queue = uniqueName('rmq-worker-test');
  const replyQueue = uniqueName('rmq-worker-replies');
  queuesToDelete.add(queue);
  queuesToDelete.add(replyQueue);
  const replies: ConsumeMessage[] = [];
  await inspector.channel.assertQueue(replyQueue, { durable: true });
  await inspector.channel.consume(replyQueue, (message) => message && replies.push(message), { noAck: true });
  const worker = createWorker({ queue, amqpUrl: AMQP_URL, logger: silent, ...options });
  workersToStop.push(worker);
  await worker.start();
  return { queue, replyQueue, replies, worker };
}

/** Sends a request as the manager does (protocol.md); returns its correlation id. */
function sendRequest(
  fixture: Fixture,
  options: { body?: string; attempt?: number; step?: string } = {},
): string {
  const correlationId = `${randomUUID()}:${options.step ?? 'count'}`;
  inspector.channel.sendToQueue(fixture.queue, Buffer.from(options.body ?? '{"n":1}'), {
    correlationId,
    replyTo: fixture.replyQueue,
    contentType: 'application/json',
    deliveryMode: 2,
    headers: { 'x-attempt': options.attempt ?? 1 },
  });
  return correlationId;
}

function repliesFor(fixture: Fixture, correlationId: string): ConsumeMessage[] {
  return fixture.replies.filter((reply) => reply.properties.correlationId === correlationId);
}

async function expectQueueSettled(queue: string): Promise<void> {
  await eventually(`${queue} to have nothing ready or unacknowledged`, async () => {
    const counts = await queueCounts(queue);
    return counts?.ready === 0 && counts.unacknowledged === 0;
  });
}

function bodyOf(message: ConsumeMessage | undefined): unknown {
  const text = message?.content.toString('utf8') ?? '';
  return text === '' ? '' : JSON.parse(text);
}

describe('Function: createWorker', () => {
  it('replies with the output, the correlation id and the attempt, then acknowledges the request', async () => {
    // Prepare
    const contexts: Omit<WorkerContext, 'heartbeat'>[] = [];
    const fixture = await aWorker({
      handler: (input, { heartbeat: _, ...context }) => {
        contexts.push(context);
        return { n: (input.n as number) + 1 };
      },
    });

    // Act
    const correlationId = sendRequest(fixture, { attempt: 2, step: 'add-one' });

    // Assess
    await eventually('the reply', () => fixture.replies.length === 1);
    const [reply] = fixture.replies;
    expect(reply?.properties).toMatchObject({ correlationId, headers: { 'x-attempt': 2 } });
    expect(reply?.properties.type).toBeUndefined();
    expect(bodyOf(reply)).toEqual({ n: 2 });
    const [jobId] = correlationId.split(':');
    expect(contexts).toEqual([{ jobId, step: 'add-one', correlationId, attempt: 2 }]);
    await expectQueueSettled(fixture.queue);
  });

  it('replies {} when the handler returns nothing', async () => {
    const fixture = await aWorker({ handler: () => undefined });

    sendRequest(fixture);

    await eventually('the reply', () => fixture.replies.length === 1);
    expect(bodyOf(fixture.replies[0])).toEqual({});
  });

  it('has a failing request delivered again, and after maxDeliveries answers with an error reply', async () => {
    // Prepare
    let calls = 0;
    const fixture = await aWorker({
      maxDeliveries: 3,
      handler: () => {
        calls++;
        throw new Error('boom');
      },
    });

    // Act
    const correlationId = sendRequest(fixture, { attempt: 4 });

    // Assess
    await eventually('the error reply', () => fixture.replies.length === 1);
    expect(calls).toBe(3);
    const [reply] = repliesFor(fixture, correlationId);
    expect(reply?.properties).toMatchObject({ type: 'error', headers: { 'x-attempt': 4 } });
    expect(bodyOf(reply)).toEqual({ error: 'boom (failed 3 times)' });
    await expectQueueSettled(fixture.queue);
    expect(calls).toBe(3);
  });

  it('succeeds on a redelivery after a transient failure', async () => {
    let calls = 0;
    const fixture = await aWorker({
      handler: () => {
        calls++;
        if (calls === 1) throw new Error('the database blinked');
        return { ok: true };
      },
    });

    sendRequest(fixture);

    await eventually('the reply', () => fixture.replies.length === 1);
    expect(calls).toBe(2);
    expect(fixture.replies[0]?.properties.type).toBeUndefined();
    expect(bodyOf(fixture.replies[0])).toEqual({ ok: true });
  });

  it('answers a WorkerError with an error reply at once, without redelivery', async () => {
    let calls = 0;
    const fixture = await aWorker({
      handler: () => {
        calls++;
        throw new WorkerError('the input names no file');
      },
    });

    sendRequest(fixture);

    await eventually('the error reply', () => fixture.replies.length === 1);
    expect(fixture.replies[0]?.properties.type).toBe('error');
    expect(bodyOf(fixture.replies[0])).toEqual({ error: 'the input names no file' });
    // The manager may retry it: nothing says otherwise. The worker names itself (`<host>:<pid>`).
    expect(fixture.replies[0]?.properties.headers).toEqual({
      'x-attempt': 1,
      'x-worker': `${hostname()}:${process.pid}`,
    });
    await expectQueueSettled(fixture.queue);
    expect(calls).toBe(1);
  });

  it('marks the error reply of a WorkerError with retryable: false with the header x-retryable: false', async () => {
    // Prepare
    const fixture = await aWorker({
      handler: () => {
        throw new WorkerError('the invoice is malformed', { retryable: false });
      },
    });

    // Act
    sendRequest(fixture, { attempt: 2 });

    // Assess
    await eventually('the error reply', () => fixture.replies.length === 1);
    expect(fixture.replies[0]?.properties).toMatchObject({
      type: 'error',
      headers: { 'x-attempt': 2, 'x-retryable': false },
    });
    expect(bodyOf(fixture.replies[0])).toEqual({ error: 'the invoice is malformed' });
    await expectQueueSettled(fixture.queue);
  });

  it.each([
    ['returns abort()', () => abort('no such order'), 'abort', 'no such order'],
    [
      'throws AbortJob',
      () => {
        throw new AbortJob('no such order');
      },
      'abort',
      'no such order',
    ],
    ['returns suspend()', () => suspend('waiting for approval'), 'suspend', 'waiting for approval'],
    [
      'throws SuspendStep',
      () => {
        throw new SuspendStep('waiting for approval');
      },
      'suspend',
      'waiting for approval',
    ],
  ])(
    'answers a handler that %s with that control reply, once, and acknowledges the request',
    async (_, handler, type, reason) => {
      const fixture = await aWorker({ handler });

      sendRequest(fixture, { attempt: 3 });

      await eventually('the control reply', () => fixture.replies.length === 1);
      expect(fixture.replies[0]?.properties).toMatchObject({ type, headers: { 'x-attempt': 3 } });
      expect(bodyOf(fixture.replies[0])).toEqual({ reason });
      await expectQueueSettled(fixture.queue);
      expect(fixture.replies).toHaveLength(1);
    },
  );

  it("gives the handler its attempt's callback token; a handler that returns awaitCallback() sends no reply, and the request is acknowledged", async () => {
    // Prepare: the first request awaits its callback, the second replies (in order: one at a time).
    const tokens: (string | undefined)[] = [];
    const fixture = await aWorker({
      concurrency: 1,
      handler: (input, context) => {
        tokens.push(context.callbackToken);
        return input.n === 1 ? awaitCallback('waiting for the partner') : { n: 2 };
      },
    });
    const correlationId = `${randomUUID()}:pay`;

    // Act
    inspector.channel.sendToQueue(fixture.queue, Buffer.from('{"n":1}'), {
      correlationId,
      replyTo: fixture.replyQueue,
      deliveryMode: 2,
      headers: { 'x-attempt': 1, 'x-switchyard-token': 'swt1.claim.mac' },
    });
    const second = sendRequest(fixture, { body: '{"n":2}' });

    // Assess: the only reply is the second request's; the first was acknowledged all the same.
    await eventually('the second reply', () => fixture.replies.length === 1);
    expect(fixture.replies[0]?.properties.correlationId).toBe(second);
    expect(tokens).toEqual(['swt1.claim.mac', undefined]);
    await expectQueueSettled(fixture.queue);
    expect(fixture.replies).toHaveLength(1);
  });

  it('answers a request whose body is not a JSON object with an error reply, without calling the handler', async () => {
    // Prepare
    let calls = 0;
    const fixture = await aWorker({
      handler: () => {
        calls++;
        return {};
      },
    });

    // Act
    const notJson = sendRequest(fixture, { body: 'hello' });
    const aList = sendRequest(fixture, { body: '[1,2]' });

    // Assess
    await eventually('two error replies', () => fixture.replies.length === 2);
    expect(repliesFor(fixture, notJson)[0]?.properties.type).toBe('error');
    expect(bodyOf(repliesFor(fixture, notJson)[0])).toEqual({ error: 'the request body is not JSON' });
    expect(bodyOf(repliesFor(fixture, aList)[0])).toEqual({
      error: 'the request body is a list, not a JSON object',
    });
    await expectQueueSettled(fixture.queue);
    expect(calls).toBe(0);
  });

  it('sends a heartbeat reply with an empty body when the handler asks', async () => {
    // Prepare
    const fixture = await aWorker({
      handler: async (_input, context) => {
        await context.heartbeat();
        return { done: true };
      },
    });

    // Act
    const correlationId = sendRequest(fixture, { attempt: 2 });

    // Assess
    await eventually('the heartbeat and the reply', () => fixture.replies.length === 2);
    const [heartbeat, reply] = repliesFor(fixture, correlationId);
    expect(heartbeat?.properties).toMatchObject({ type: 'heartbeat', headers: { 'x-attempt': 2 } });
    expect(heartbeat?.content.length).toBe(0);
    expect(bodyOf(reply)).toEqual({ done: true });
  });

  it('works on as many requests at once as its concurrency', async () => {
    // Prepare
    let running = 0;
    let mostAtOnce = 0;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fixture = await aWorker({
      concurrency: 3,
      handler: async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await released;
        running--;
        return {};
      },
    });

    // Act
    for (let index = 0; index < 5; index++) sendRequest(fixture);
    await eventually('three requests in hand', () => running === 3);

    // Assess
    expect(await queueCounts(fixture.queue)).toEqual({ ready: 2, unacknowledged: 3 });
    release();
    await eventually('five replies', () => fixture.replies.length === 5);
    expect(mostAtOnce).toBe(3);
  });

  it('on stop, takes no new requests but finishes, answers and acknowledges the one in hand', async () => {
    // Prepare
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const fixture = await aWorker({
      handler: async () => {
        started++;
        await released;
        return { finished: true };
      },
    });
    const inHand = sendRequest(fixture);
    await eventually('the request to be in hand', () => started === 1);

    // Act
    let stopped = false;
    const stopping = fixture.worker.stop().then(() => {
      stopped = true;
    });
    sendRequest(fixture);
    await eventually(
      'the consumer to be cancelled',
      async () => (await queueCounts(fixture.queue))?.ready === 1,
    );
    expect(stopped).toBe(false);
    release();
    await stopping;

    // Assess
    expect(bodyOf(repliesFor(fixture, inHand)[0])).toEqual({ finished: true });
    expect(await queueCounts(fixture.queue)).toEqual({ ready: 1, unacknowledged: 0 });
    expect(started).toBe(1);
  });

  it('consumes again by itself after its connection is closed by the broker', async () => {
    // Prepare
    const fixture = await aWorker({ handler: () => ({ ok: true }) });

    // Act
    expect(await closeConnectionsNamed(`switchyard-worker:${fixture.queue}`)).toBe(1);
    sendRequest(fixture);

    // Assess
    await eventually('the reply after the reconnect', () => fixture.replies.length === 1);
    await expectQueueSettled(fixture.queue);
  });
});
