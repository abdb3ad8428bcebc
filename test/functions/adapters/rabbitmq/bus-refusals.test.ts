import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UndeliverableError } from '../../../../engine/ports/bus.js';
import { RabbitMqBus } from '../../../../functions/adapters/rabbitmq/bus.js';
import type { RabbitMqLogger } from '../../../../functions/transport/amqp/connection.js';
import { aRequestTo } from '../../../support/factories.js';
import { AMQP_URL, deleteQueues, openTestChannel, uniqueName } from '../../../support/rabbitmq.js';

const warnings: string[] = [];
const logger: RabbitMqLogger = { info: () => {}, warn: (message) => warnings.push(message), error: () => {} };

let inspector: { model: ChannelModel; channel: Channel };
const queuesToDelete = new Set<string>();
const busesToClose: RabbitMqBus[] = [];

beforeAll(async () => {
  inspector = await openTestChannel();
});

afterEach(async () => {
  await Promise.all(busesToClose.splice(0).map((bus) => bus.close()));
  warnings.length = 0;
});

afterAll(async () => {
  await inspector.model.close();
  await deleteQueues(queuesToDelete);
});

function aQueue(): string {
  const queue = uniqueName('rmq-refusal-test');
  queuesToDelete.add(queue);
  return queue;
}

function aBus(): RabbitMqBus {
  const bus = new RabbitMqBus({
    url: AMQP_URL,
    connectionName: uniqueName('switchyard-refusal-test'),
    logger,
    replyQueue: aQueue(),
    connectTimeoutMs: 3_000,
  });
  busesToClose.push(bus);
  return bus;
}

/** Rejects when `promise` has not settled within `ms`: a hang fails the test instead of timing it out. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms),
    ),
  ]);
}

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

/** The undeliverable errors of a rejection: one, or the list of an AggregateError. */
function undeliverable(error: unknown): UndeliverableError[] {
  const errors = error instanceof AggregateError ? error.errors : [error];
  return errors.filter((item): item is UndeliverableError => item instanceof UndeliverableError);
}

describe('RabbitMqBus: queues the broker refuses', { timeout: 30_000 }, () => {
  it('still declares and sends to new queues after a 400-byte name (200 × "é") was declared', async () => {
    const bus = aBus();
    await within(5_000, bus.ensureQueues([{ queue: 'é'.repeat(200), vhost: null }])).catch(() => {});

    const queue = aQueue();
    await within(5_000, bus.send([aRequestTo(queue)]));

    expect(await messageCount(queue)).toBe(1);
  });

  it("fails only the requests to a queue the broker refuses to declare, with the broker's reason, and sends the rest", async () => {
    // Prepare: a queue another connection holds exclusively (the broker answers 405 RESOURCE_LOCKED).
    const locked = aQueue();
    const owner = await openTestChannel();
    await owner.channel.assertQueue(locked, { exclusive: true });
    const bus = aBus();
    const good = aQueue();
    const refused = aRequestTo(locked);

    try {
      // Act
      const error = await within(5_000, bus.send([aRequestTo(good), refused, aRequestTo(good)])).then(
        () => undefined,
        (failure: unknown) => failure,
      );

      // Assess
      expect(undeliverable(error).map((item) => item.correlationId)).toEqual([refused.correlationId]);
      expect(undeliverable(error)[0]?.message).toMatch(/RESOURCE_LOCKED/);
      expect(await messageCount(good)).toBe(2);
      const next = aQueue();
      await within(5_000, bus.send([aRequestTo(next)]));
      expect(await messageCount(next)).toBe(1);
    } finally {
      await owner.model.close();
    }
  });

  it('sends the good requests of a batch that holds a queue name RabbitMQ cannot have', async () => {
    const bus = aBus();
    const good = aQueue();
    const bad = aRequestTo('é'.repeat(200));

    const error = await within(5_000, bus.send([aRequestTo(good), bad])).then(
      () => undefined,
      (failure: unknown) => failure,
    );

    expect(undeliverable(error).map((item) => item.correlationId)).toEqual([bad.correlationId]);
    expect(await messageCount(good)).toBe(1);
  });
});

describe('RabbitMqBus: vhosts the broker refuses', { timeout: 30_000 }, () => {
  it('fails the requests to a vhost that does not exist as undeliverable, and stops logging in to it', async () => {
    const bus = aBus();
    const vhost = uniqueName('switchyard-missing-vhost');
    const request = aRequestTo(aQueue(), { vhost });

    const error = await within(5_000, bus.send([request])).then(
      () => undefined,
      (failure: unknown) => failure,
    );

    expect(undeliverable(error).map((item) => item.correlationId)).toEqual([request.correlationId]);
    expect(undeliverable(error)[0]?.message).toContain(`RabbitMQ refused the vhost "${vhost}"`);
    const attempts = () => warnings.filter((warning) => warning.includes(encodeURIComponent(vhost))).length;
    const before = attempts();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(attempts()).toBe(before);
  });

  it('refuses to consume replies on a vhost that does not exist, without retrying for ever', async () => {
    const bus = aBus();
    const vhost = uniqueName('switchyard-missing-vhost');

    await expect(
      within(
        5_000,
        bus.consumeReplies(async () => [], { vhost }),
      ),
    ).rejects.toThrow(`RabbitMQ refused the vhost "${vhost}"`);
    const attempts = () => warnings.filter((warning) => warning.includes(encodeURIComponent(vhost))).length;
    const before = attempts();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(attempts()).toBe(before);
  });
});
