import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StepRequest } from '../../../../engine/job/types.js';
import { type InboundReply, RetryableSendError, UndeliverableError } from '../../../../engine/ports/bus.js';
import type { ReplyOutcome } from '../../../../engine/ports/reply-intake.js';
import { RabbitMqBus } from '../../../../functions/adapters/rabbitmq/bus.js';
import {
  POISONED_REASON_HEADER,
  poisonQueueOf,
} from '../../../../functions/adapters/rabbitmq/poison-queue.js';
import { REQUEST_IN_AMQP } from '../../../../functions/adapters/rabbitmq/request-message.js';
import type { RabbitMqLogger } from '../../../../functions/transport/amqp/connection.js';
import { attemptOf } from '../../../../functions/transport/amqp/message.js';
import { replyQueueFor, replyQueuesOf } from '../../../../functions/transport/amqp/reply-shards.js';
import { aRequestTo } from '../../../support/factories.js';
import {
  AMQP_URL,
  addVhost,
  closeConnectionsNamed,
  deleteQueues,
  deleteVhost,
  eventually,
  openTestChannel,
  queueCounts,
  uniqueName,
} from '../../../support/rabbitmq.js';
import { handlingReplies } from '../../../support/reply-handlers.js';
import { describeBusContract, fromCorrelationId } from '../../bus-contract.js';

const silent: RabbitMqLogger = { info: () => {}, warn: () => {}, error: () => {} };

let inspector: { model: ChannelModel; channel: Channel };
const queuesToDelete = new Set<string>();
const busesToClose: RabbitMqBus[] = [];

beforeAll(async () => {
  inspector = await openTestChannel();
});

afterEach(async () => {
  await Promise.all(busesToClose.splice(0).map((bus) => bus.close()));
});

afterAll(async () => {
  await inspector.model.close();
  await deleteQueues(queuesToDelete);
});

/** A queue name for this test, deleted after the file. */
function aQueue(prefix = 'rmq-bus-test'): string {
  const queue = uniqueName(prefix);
  queuesToDelete.add(queue);
  return queue;
}

function aBus(
  options: {
    replyQueue?: string;
    replyShards?: number;
    url?: string;
    logger?: RabbitMqLogger;
    clock?: () => number;
  } = {},
): {
  bus: RabbitMqBus;
  connectionName: string;
} {
  const connectionName = uniqueName('switchyard-bus-test');
  const bus = new RabbitMqBus({ url: AMQP_URL, connectionName, logger: silent, ...options });
  busesToClose.push(bus);
  return { bus, connectionName };
}

/** Takes every message of a queue (acknowledging them), until it has `count`. */
async function drainQueue(channel: Channel, queue: string, count: number): Promise<GetMessage[]> {
  const messages: GetMessage[] = [];
  await eventually(`${count} messages in ${queue} (got ${messages.length})`, async () => {
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      messages.push(message);
    }
    return messages.length >= count;
  });
  return messages;
}

/** Messages ready in a queue; undefined when there is no such queue. */
async function messageCount(queue: string): Promise<number | undefined> {
  const probe = await inspector.model.createChannel();
  probe.on('error', () => {});
  try {
    return (await probe.checkQueue(queue)).messageCount;
  } catch {
    return undefined;
  } finally {
    await probe.close().catch(() => {});
  }
}

/** Publishes a reply to `queue` as a worker would. */
function publishReply(
  channel: Channel,
  queue: string,
  correlationId: string,
  options: { body?: string; type?: string; attempt?: unknown } = {},
): void {
  channel.sendToQueue(queue, Buffer.from(options.body ?? '{"ok":true}'), {
    correlationId,
    ...(options.type ? { type: options.type } : {}),
    ...(options.attempt !== undefined ? { headers: { 'x-attempt': options.attempt } } : {}),
  });
}

describeBusContract('rabbitmq', async () => {
  const vhost = uniqueName('switchyard-contract-vhost');
  await addVhost(vhost);
  const worker = await openTestChannel(vhost);
  // The bus's clock, from which `expiration` is counted: the request's deadline is that and the expiration.
  const now = 1_900_000_000_000;
  const { bus } = aBus({ clock: () => now });
  return {
    bus,
    placement: REQUEST_IN_AMQP,
    vhost,
    aQueue: async () => uniqueName('rmq-bus-contract'),
    receive: async (queue) => {
      const [message] = await drainQueue(worker.channel, queue, 1);
      if (!message) throw new Error(`no request in ${queue}`);
      const { properties, fields, content } = message;
      return {
        ...fromCorrelationId(properties.correlationId),
        queue: fields.routingKey,
        vhost,
        attempt: attemptOf(properties.headers),
        body: JSON.parse(content.toString('utf8')),
        deadline: properties.expiration === undefined ? undefined : now + Number(properties.expiration),
      };
    },
    cleanup: async () => {
      await bus.close();
      await worker.model.close();
      await deleteVhost(vhost);
    },
  };
});

describe('Class: RabbitMqBus', () => {
  describe('Method: send', () => {
    it('publishes each request on the default exchange with the properties of protocol.md', async () => {
      // Prepare
      const queue = aQueue();
      const replyQueue = uniqueName('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      const request = aRequestTo(queue, {
        attempt: 3,
        body: { text: 'hello', n: 1, nested: { list: [1, 'a'] } },
      });

      // Act
      await bus.send([request]);

      // Assess
      const [message] = await drainQueue(inspector.channel, queue, 1);
      expect(message?.fields.exchange).toBe('');
      expect(message?.fields.routingKey).toBe(queue);
      expect(message?.properties).toMatchObject({
        correlationId: request.correlationId,
        replyTo: replyQueue,
        contentType: 'application/json',
        deliveryMode: 2,
        headers: { 'x-attempt': 3 },
      });
      expect(JSON.parse(message?.content.toString('utf8') ?? '')).toEqual(request.body);
    });

    it('uses workflow-manager as the reply queue by default', async () => {
      const queue = aQueue();
      const { bus } = aBus();

      await bus.send([aRequestTo(queue)]);

      const [message] = await drainQueue(inspector.channel, queue, 1);
      expect(message?.properties.replyTo).toBe('workflow-manager');
    });

    it('with reply shards, names one reply queue per job (by its id), declares them all, and every job uses each of them', async () => {
      // Prepare: Amazon MQ's mapping is one invocation at a time per queue; shards make lanes.
      const queue = aQueue();
      const replyQueue = aQueue('rmq-bus-replies');
      const shards = replyQueuesOf(replyQueue, 4);
      for (const shard of shards) queuesToDelete.add(shard);
      const { bus } = aBus({ replyQueue, replyShards: 4 });
      const requests = Array.from({ length: 40 }, () => aRequestTo(queue));
      // A job's second step replies to the same queue as its first.
      const first = requests[0] as StepRequest;
      requests.push(
        aRequestTo(queue, { jobId: first.jobId, step: 'second', correlationId: `${first.jobId}:second` }),
      );

      // Act
      await bus.send(requests);

      // Assess
      const messages = await drainQueue(inspector.channel, queue, requests.length);
      const replyTo = new Map(
        messages.map((message) => [message.properties.correlationId, message.properties.replyTo]),
      );
      for (const request of requests)
        expect(replyTo.get(request.correlationId)).toBe(replyQueueFor(replyQueue, 4, request.jobId));
      expect(new Set(replyTo.values())).toEqual(new Set(shards));
      expect(replyTo.get(`${first.jobId}:second`)).toBe(replyTo.get(first.correlationId));
      for (const shard of shards) await inspector.channel.checkQueue(shard);
    });

    it('declares a queue nobody declared, durable and without arguments, and resolves once the broker holds the request', async () => {
      // Prepare
      const queue = aQueue();
      const { bus } = aBus();

      // Act
      await bus.send([aRequestTo(queue), aRequestTo(queue)]);

      // Assess: the messages are there the moment send resolves (confirmed), in a queue whose
      // declaration matches the original workers' (durable, no arguments).
      expect(await messageCount(queue)).toBe(2);
      const { channel } = inspector;
      await expect(channel.assertQueue(queue, { durable: true })).resolves.toMatchObject({ messageCount: 2 });
    });

    it('declares its reply queue before the first request, so a reply that comes before anyone consumes it waits there', async () => {
      // Prepare: nothing consumes (or ever declared) this reply queue yet, as during recovery.
      const queue = aQueue();
      const replyQueue = aQueue('rmq-bus-test-replies');
      const { bus } = aBus({ replyQueue });

      // Act: the request goes out, and a worker answers it the way workers do (no `mandatory`).
      await bus.send([aRequestTo(queue)]);
      const [request] = await drainQueue(inspector.channel, queue, 1);
      inspector.channel.sendToQueue(request!.properties.replyTo, Buffer.from('{}'), {
        correlationId: request!.properties.correlationId,
      });

      // Assess: the broker kept the reply instead of dropping it.
      await eventually(
        'the reply waiting in the reply queue',
        async () => (await messageCount(replyQueue)) === 1,
      );
    });

    it('sends a batch of 10,000 requests over several queues in one go', async () => {
      // Prepare
      const queues = [aQueue(), aQueue(), aQueue(), aQueue()];
      const { bus } = aBus();
      const requests = Array.from({ length: 10_000 }, (_, index) =>
        aRequestTo(queues[index % queues.length] as string, { body: { index, text: 'x'.repeat(200) } }),
      );

      // Act
      const started = performance.now();
      await bus.send(requests);
      const elapsedMs = performance.now() - started;

      // Assess (a sanity bound, not a benchmark)
      expect(elapsedMs).toBeLessThan(20_000);
      const counts = await Promise.all(queues.map(messageCount));
      expect(counts).toEqual([2_500, 2_500, 2_500, 2_500]);
    });

    it('tells of each request as its confirm arrives, before the send ends, and never of a refused one', async () => {
      const full = aQueue('rmq-bus-test-full');
      const healthy = aQueue();
      await inspector.channel.assertQueue(full, {
        durable: true,
        arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
      });
      inspector.channel.sendToQueue(full, Buffer.from('{}'));
      await eventually('the full queue to be full', async () => (await messageCount(full)) === 1);
      const { bus } = aBus();
      const requests = Array.from({ length: 2_000 }, () => aRequestTo(healthy));
      const refused = aRequestTo(full);
      const told: StepRequest[] = [];

      // What was told by the time the send settles (its callbacks run first).
      const toldBeforeTheEnd = await bus
        .send([...requests, refused], { onSent: (request) => told.push(request) })
        .then(
          () => told.length,
          () => told.length,
        );

      expect(toldBeforeTheEnd).toBe(2_000);
      expect(new Set(told)).toEqual(new Set(requests));
      expect(told).not.toContain(refused);
    });

    it('reports a request to a queue name RabbitMQ cannot have as undeliverable, and sends the others', async () => {
      const queue = aQueue();
      const { bus } = aBus();
      const bad = aRequestTo('q'.repeat(256));

      const error = await bus.send([aRequestTo(queue), bad]).then(
        () => undefined,
        (reason: unknown) => reason,
      );

      expect(error).toBeInstanceOf(AggregateError);
      const failures = (error as AggregateError).errors;
      expect(failures).toHaveLength(1);
      expect(failures[0]).toBeInstanceOf(UndeliverableError);
      expect(failures[0]).toMatchObject({ correlationId: bad.correlationId });
      expect(await messageCount(queue)).toBe(1);
    });

    it('fails only the requests of a queue that refuses them (full, reject-publish): the others are sent once', async () => {
      // Prepare: a full queue (x-max-length 1, reject-publish) beside a healthy one.
      const full = aQueue('rmq-bus-test-full');
      const healthy = aQueue();
      await inspector.channel.assertQueue(full, {
        durable: true,
        arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
      });
      inspector.channel.sendToQueue(full, Buffer.from('{}'));
      await eventually('the full queue to be full', async () => (await messageCount(full)) === 1);
      const { bus } = aBus();
      const refused = aRequestTo(full);
      const sent = [aRequestTo(healthy), aRequestTo(healthy)];

      // Act
      const error = await bus.send([sent[0]!, refused, sent[1]!]).then(
        () => undefined,
        (reason: unknown) => reason,
      );

      // Assess: only the refused request is reported, as worth retrying; the others are in their queue.
      expect(error).toBeInstanceOf(AggregateError);
      const failures = (error as AggregateError).errors;
      expect(failures).toHaveLength(1);
      expect(failures[0]).toBeInstanceOf(RetryableSendError);
      expect(failures[0]).toMatchObject({ correlationId: refused.correlationId });
      expect((failures[0] as Error).message).toMatch(new RegExp(`refused by queue ${full}`));
      const messages = await drainQueue(inspector.channel, healthy, 2);
      expect(messages.map((message) => message.properties.correlationId)).toEqual(
        sent.map((request) => request.correlationId),
      );
      expect(await messageCount(full)).toBe(1);
    });

    it('fails rather than losing a request when its queue was deleted after it was declared, then declares it again', async () => {
      // Prepare
      const queue = aQueue();
      const { bus } = aBus();
      await bus.send([aRequestTo(queue)]);
      await inspector.channel.deleteQueue(queue);

      // Act / Assess: the broker returns the request (mandatory) and send rejects, so the caller retries.
      await expect(bus.send([aRequestTo(queue)])).rejects.toThrow(/does not exist/);
      await bus.send([aRequestTo(queue)]);
      expect(await messageCount(queue)).toBe(1);
    });

    it('loses nothing when its connection is closed by the broker while it sends', async () => {
      // Prepare
      const queue = aQueue();
      const { bus, connectionName } = aBus();
      const batches = Array.from({ length: 40 }, () => Array.from({ length: 250 }, () => aRequestTo(queue)));
      let failedSends = 0;

      // Act: send like the manager's outbox does (keep a batch until send resolves), and drop the
      // connection twice on the way.
      const sending = (async () => {
        for (const batch of batches) {
          for (;;) {
            try {
              await bus.send(batch);
              break;
            } catch (error) {
              if (++failedSends > 20) throw error;
              await new Promise((resolve) => setImmediate(resolve));
            }
          }
        }
      })();
      await eventually('the first batches to arrive', async () => ((await messageCount(queue)) ?? 0) > 0);
      expect(await closeConnectionsNamed(connectionName)).toBe(1);
      await eventually('the bus to reconnect', async () => ((await messageCount(queue)) ?? 0) > 2_500);
      expect(await closeConnectionsNamed(connectionName)).toBe(1);
      await sending;

      // Assess: every request is in the queue (a batch cut short may have gone twice: at least once).
      const messages = await drainQueue(inspector.channel, queue, 10_000);
      const expected = new Set(batches.flat().map((request) => request.correlationId));
      const arrived = new Set(messages.map((message) => message.properties.correlationId as string));
      expect([...expected].filter((id) => !arrived.has(id))).toEqual([]);
    });

    it('sends to the queue of a non-default vhost over a connection to that vhost', async () => {
      // Prepare
      const vhost = uniqueName('switchyard-test-vhost');
      await addVhost(vhost);
      try {
        const queue = uniqueName('rmq-bus-test');
        const { bus } = aBus();
        const request = aRequestTo(queue, { vhost });

        // Act
        await bus.send([request]);

        // Assess
        const other = await openTestChannel(vhost);
        try {
          const [message] = await drainQueue(other.channel, queue, 1);
          expect(message?.properties.correlationId).toBe(request.correlationId);
        } finally {
          await other.model.close();
        }
        expect(await messageCount(queue)).toBeUndefined();
      } finally {
        await deleteVhost(vhost);
      }
    });
  });

  describe('Method: ensureQueues', () => {
    it('declares the queues so that requests sent before any worker started wait there', async () => {
      const queue = aQueue();
      const { bus } = aBus();

      await bus.ensureQueues([{ queue, vhost: null }]);

      await expect(inspector.channel.checkQueue(queue)).resolves.toMatchObject({ messageCount: 0 });
    });
  });

  describe('Method: ping', () => {
    it('resolves when the broker is reachable', async () => {
      const { bus } = aBus();

      await expect(bus.ping()).resolves.toBeUndefined();
    });

    it('throws when the broker is unreachable, and never shows the password', async () => {
      // Prepare
      const logged: string[] = [];
      const record = (message: string): void => {
        logged.push(message);
      };
      const bus = new RabbitMqBus({
        url: 'amqp://someone:s3cr3t-pw@127.0.0.1:1/',
        connectTimeoutMs: 1_000,
        logger: { info: record, warn: record, error: record },
      });
      busesToClose.push(bus);

      // Act
      const error = await bus.ping().then(
        () => undefined,
        (reason: unknown) => reason as Error,
      );

      // Assess
      expect(error?.message).toMatch(/not reachable/);
      expect(error?.message).not.toContain('s3cr3t-pw');
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join('\n')).not.toContain('s3cr3t-pw');
    });
  });

  describe('Method: consumeReplies', () => {
    it('hands over replies with their correlation id, body, type and attempt', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      const received: InboundReply[] = [];
      await bus.consumeReplies(
        handlingReplies(async (replies) => {
          received.push(...replies);
        }),
      );

      // Act
      publishReply(inspector.channel, replyQueue, 'job:a', { body: '{"n":1}', attempt: 2 });
      publishReply(inspector.channel, replyQueue, 'job:b', {
        body: '{"error":"boom"}',
        type: 'error',
        attempt: '3',
      });
      publishReply(inspector.channel, replyQueue, 'job:c', { body: '', type: 'heartbeat', attempt: 'x' });
      publishReply(inspector.channel, replyQueue, 'job:d', { body: 'null' });

      // Assess
      await eventually('4 replies', () => received.length === 4);
      expect(received).toEqual([
        { correlationId: 'job:a', body: '{"n":1}', attempt: 2 },
        { correlationId: 'job:b', body: '{"error":"boom"}', type: 'error', attempt: 3 },
        { correlationId: 'job:c', body: '', type: 'heartbeat' },
        { correlationId: 'job:d', body: 'null' },
      ]);
    });

    it('declares the reply queue durable and not exclusive, so replies wait while the manager is down', async () => {
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });

      const consumer = await bus.consumeReplies(handlingReplies(async () => {}));
      await consumer.stop();

      // Another connection can use it (not exclusive), and it is durable with no arguments.
      await expect(inspector.channel.assertQueue(replyQueue, { durable: true })).resolves.toMatchObject({
        queue: replyQueue,
      });
      publishReply(inspector.channel, replyQueue, 'job:later');
      await eventually('the reply to wait in the queue', async () => (await messageCount(replyQueue)) === 1);
    });

    it('groups the replies that are waiting into batches of at most maxBatch', async () => {
      // Prepare: 300 replies wait before the consumer starts.
      const replyQueue = aQueue('rmq-bus-replies');
      await inspector.channel.assertQueue(replyQueue, { durable: true });
      for (let index = 0; index < 300; index++) publishReply(inspector.channel, replyQueue, `job:${index}`);
      await eventually('300 waiting replies', async () => (await messageCount(replyQueue)) === 300);
      const { bus } = aBus({ replyQueue });
      const batchSizes: number[] = [];
      const seen: string[] = [];

      // Act
      await bus.consumeReplies(
        handlingReplies(async (replies) => {
          batchSizes.push(replies.length);
          seen.push(...replies.map((reply) => reply.correlationId ?? ''));
        }),
        { maxBatch: 50 },
      );

      // Assess
      await eventually('all 300 replies', () => seen.length === 300);
      expect(seen).toEqual(Array.from({ length: 300 }, (_, index) => `job:${index}`));
      expect(Math.max(...batchSizes)).toBe(50);
      expect(batchSizes.length).toBeLessThan(300);
      await eventually('the queue to be empty', async () => {
        const counts = await queueCounts(replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      });
    });

    it('acknowledges a batch only after onBatch resolves', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let calls = 0;
      await bus.consumeReplies(
        handlingReplies(async () => {
          calls++;
          await held;
        }),
      );

      // Act
      publishReply(inspector.channel, replyQueue, 'job:held');
      await eventually('onBatch to be called', () => calls === 1);

      // Assess
      expect(await queueCounts(replyQueue)).toEqual({ ready: 0, unacknowledged: 1 });
      release();
      await eventually('the reply to be acknowledged', async () => {
        const counts = await queueCounts(replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      });
      expect(calls).toBe(1);
    });

    it('hands the batch back when onBatch throws, so the replies come again', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      const attempts: string[][] = [];
      await bus.consumeReplies(
        handlingReplies(async (replies) => {
          attempts.push(replies.map((reply) => reply.correlationId ?? ''));
          if (attempts.length === 1) throw new Error('the store is down');
        }),
        { retryDelayMs: 10 },
      );

      // Act
      publishReply(inspector.channel, replyQueue, 'job:retry');

      // Assess
      await eventually('the reply to come again', () => attempts.length >= 2);
      expect(attempts.slice(0, 2)).toEqual([['job:retry'], ['job:retry']]);
      await eventually('the reply to be acknowledged', async () => {
        const counts = await queueCounts(replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      });
    });

    it('settles each reply as the handler says: acknowledges one done, hands one back, which comes again marked redelivered', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      const seen: { correlationId?: string; redelivered: boolean }[] = [];
      await bus.consumeReplies(
        async (deliveries) => {
          seen.push(
            ...deliveries.map(({ reply, redelivered }) => ({
              correlationId: reply.correlationId,
              redelivered,
            })),
          );
          return deliveries.map(
            ({ reply, redelivered }): ReplyOutcome =>
              reply.correlationId === 'job:flaky' && !redelivered
                ? { kind: 'retry', error: new Error('not now') }
                : { kind: 'done' },
          );
        },
        { retryDelayMs: 10 },
      );

      // Act
      publishReply(inspector.channel, replyQueue, 'job:steady');
      publishReply(inspector.channel, replyQueue, 'job:flaky');

      // Assess
      await eventually('the handed-back reply to come again', () => seen.length >= 3);
      expect(seen).toEqual([
        { correlationId: 'job:steady', redelivered: false },
        { correlationId: 'job:flaky', redelivered: false },
        { correlationId: 'job:flaky', redelivered: true },
      ]);
      await eventually('both acknowledged', async () => {
        const counts = await queueCounts(replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      });
    });

    it('copies a poisoned reply, properties, headers and the reason, to <reply queue>.poisoned, then acknowledges it', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      queuesToDelete.add(poisonQueueOf(replyQueue));
      const { bus } = aBus({ replyQueue });
      await bus.consumeReplies(async (deliveries) =>
        deliveries.map(
          ({ reply }): ReplyOutcome =>
            reply.correlationId === 'job:bad'
              ? { kind: 'poisoned', reason: 'it killed the manager' }
              : { kind: 'done' },
        ),
      );

      // Act
      publishReply(inspector.channel, replyQueue, 'job:good');
      publishReply(inspector.channel, replyQueue, 'job:bad', {
        body: '{"huge":true}',
        type: 'error',
        attempt: 2,
      });

      // Assess
      await eventually(
        'the poisoned copy',
        async () => (await messageCount(poisonQueueOf(replyQueue))) === 1,
      );
      const [poisoned] = await drainQueue(inspector.channel, poisonQueueOf(replyQueue), 1);
      expect(poisoned?.content.toString()).toBe('{"huge":true}');
      expect(poisoned?.properties).toMatchObject({
        correlationId: 'job:bad',
        type: 'error',
        deliveryMode: 2,
        headers: { 'x-attempt': 2, [POISONED_REASON_HEADER]: 'it killed the manager' },
      });
      await eventually('the reply queue to be empty', async () => {
        const counts = await queueCounts(replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      });
    });

    it('declares no poison queue while no reply is poisoned', async () => {
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      const seen: string[] = [];
      await bus.consumeReplies(
        handlingReplies(async (replies) => {
          seen.push(...replies.map((reply) => reply.correlationId ?? ''));
        }),
      );

      publishReply(inspector.channel, replyQueue, 'job:fine');

      await eventually('the reply', () => seen.length === 1);
      expect(await messageCount(poisonQueueOf(replyQueue))).toBeUndefined();
    });

    it('resumes by itself after its connection is closed by the broker, losing no reply', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus, connectionName } = aBus({ replyQueue });
      const seen = new Set<string>();
      await bus.consumeReplies(
        handlingReplies(async (replies) => {
          for (const reply of replies) seen.add(reply.correlationId ?? '');
        }),
      );
      const total = 3_000;

      // Act: replies keep coming while the consumer's connection is dropped twice.
      for (let index = 0; index < total / 3; index++)
        publishReply(inspector.channel, replyQueue, `job:${index}`);
      expect(await closeConnectionsNamed(`${connectionName}:replies`)).toBe(1);
      for (let index = total / 3; index < (2 * total) / 3; index++) {
        publishReply(inspector.channel, replyQueue, `job:${index}`);
      }
      await eventually('replies after the reconnect', () => seen.size > total / 3);
      expect(await closeConnectionsNamed(`${connectionName}:replies`)).toBe(1);
      for (let index = (2 * total) / 3; index < total; index++) {
        publishReply(inspector.channel, replyQueue, `job:${index}`);
      }

      // Assess
      await eventually(`all ${total} replies (seen ${seen.size})`, () => seen.size === total, 30_000);
    });

    it('consumes the reply queue of a non-default vhost', async () => {
      // Prepare
      const vhost = uniqueName('switchyard-test-vhost');
      await addVhost(vhost);
      try {
        const { bus } = aBus();
        const received: InboundReply[] = [];
        const consumer = await bus.consumeReplies(
          handlingReplies(async (replies) => {
            received.push(...replies);
          }),
          { vhost },
        );
        const other = await openTestChannel(vhost);

        // Act
        publishReply(other.channel, 'workflow-manager', 'job:vhost');

        // Assess
        await eventually('the reply from the vhost', () => received.length === 1);
        expect(received[0]?.correlationId).toBe('job:vhost');
        await consumer.stop();
        await other.model.close();
      } finally {
        await deleteVhost(vhost);
      }
    });

    it('on stop, lets the batch in hand finish and acknowledges it', async () => {
      // Prepare
      const replyQueue = aQueue('rmq-bus-replies');
      const { bus } = aBus({ replyQueue });
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let finished = false;
      const consumer = await bus.consumeReplies(
        handlingReplies(async () => {
          await held;
          finished = true;
        }),
      );
      publishReply(inspector.channel, replyQueue, 'job:in-hand');
      await eventually(
        'the batch to be in hand',
        async () => (await queueCounts(replyQueue))?.unacknowledged === 1,
      );

      // Act
      const stopping = consumer.stop();
      release();
      await stopping;

      // Assess
      expect(finished).toBe(true);
      expect(await queueCounts(replyQueue)).toEqual({ ready: 0, unacknowledged: 0 });
    });
  });
});
