import { type ChannelModel, connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplyConsumer } from '../../../../functions/adapters/rabbitmq/reply-consumer.js';
import { silentLogger } from '../../../../functions/telemetry/telemetry.js';
import { eventually } from '../../../support/original-worker.js';
import { AMQP_URL, uniqueName } from '../../../support/rabbitmq.js';

describe('the reply queue has one owner', { timeout: 30_000 }, () => {
  let other: ChannelModel;

  beforeAll(async () => {
    other = await connect(AMQP_URL);
  });
  afterAll(async () => {
    await other.close().catch(() => {});
  });

  it('a consumer that finds its queue taken by another after a reconnect stops and says so', async () => {
    const queue = uniqueName('owned');
    const fatal: Error[] = [];
    const consumer = await startReplyConsumer(
      { url: AMQP_URL, queue, logger: silentLogger, onFatal: (error) => fatal.push(error) },
      async () => [],
    );
    try {
      const channel = await other.createChannel();
      channel.on('error', () => {});
      await expect(channel.consume(queue, () => {}, { exclusive: true })).rejects.toThrow(/403/);
      // Deleting the queue cancels the consumer, which reconnects after a backoff of at least 75 ms;
      // another manager declares the queue and consumes it first.
      const thief = await other.createChannel();
      await thief.deleteQueue(queue);
      await thief.assertQueue(queue, { durable: true });
      await thief.consume(queue, () => {}, { exclusive: true });
      await eventually(() => fatal.length > 0, 10_000);
      expect(fatal[0]?.message).toContain(`the reply queue "${queue}"`);
      expect(fatal[0]?.message).toContain('--reply-queue');
      await thief.deleteQueue(queue);
    } finally {
      await consumer.stop();
    }
  });
});
