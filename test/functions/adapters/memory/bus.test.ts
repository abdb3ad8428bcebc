import { describe, expect, it } from 'vitest';
import type { InboundReply, ReplyOutcome, StepRequest } from '../../../../engine/index.js';
import {
  MemoryBroker,
  MemoryBus,
  MemoryWorkerTransport,
  memoryPoisonQueueOf,
  REQUEST_IN_MEMORY,
} from '../../../../functions/adapters/memory/bus.js';
import { uuid } from '../../../support/factories.js';
import { eventually } from '../../../support/rabbitmq.js';
import { handlingReplies } from '../../../support/reply-handlers.js';
import { describeBusContract, fromCorrelationId } from '../../bus-contract.js';

describeBusContract('memory', async () => {
  const broker = new MemoryBroker();
  return {
    bus: new MemoryBus(broker),
    placement: REQUEST_IN_MEMORY,
    vhost: 'tenant-a',
    aQueue: async () => `memory-bus-${uuid()}`,
    receive: (queue) => {
      const worker = new MemoryWorkerTransport(broker);
      return new Promise<Partial<StepRequest>>((resolve) => {
        void worker.consume(queue, 1, async (delivery) => {
          await delivery.ack();
          await worker.stopConsuming();
          resolve({
            ...fromCorrelationId(delivery.correlationId),
            queue,
            attempt: delivery.attempt,
            body: JSON.parse(delivery.body),
          });
        });
      });
    },
    cleanup: async () => {},
  };
});

describe('Class: MemoryWorkerTransport (serve --bus memory)', () => {
  it('hands the manager an error reply marked not retryable as such, and an unmarked one without the mark', async () => {
    // Prepare
    const broker = new MemoryBroker();
    const bus = new MemoryBus(broker);
    const transport = new MemoryWorkerTransport(broker);
    const replies: InboundReply[] = [];
    await bus.consumeReplies(
      handlingReplies(async (batch) => {
        replies.push(...batch);
      }),
    );

    // Act
    await transport.reply('workflow-manager', 'job:a', '{"error":"bad"}', {
      type: 'error',
      attempt: 1,
      retryable: false,
    });
    await transport.reply('workflow-manager', 'job:b', '{"error":"flaky"}', { type: 'error' });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));

    // Assess
    expect(replies).toEqual([
      { correlationId: 'job:a', body: '{"error":"bad"}', type: 'error', attempt: 1, retryable: false },
      { correlationId: 'job:b', body: '{"error":"flaky"}', type: 'error' },
    ]);
  });
});

describe('Class: MemoryBus (the reply intake of serve --bus memory)', () => {
  it('settles each reply as the handler says: done goes, retry comes again marked redelivered, poisoned moves to the poison queue', async () => {
    // Prepare
    const broker = new MemoryBroker();
    const bus = new MemoryBus(broker);
    const transport = new MemoryWorkerTransport(broker);
    const seen: { correlationId?: string; redelivered: boolean }[] = [];
    await bus.consumeReplies(async (deliveries) => {
      seen.push(
        ...deliveries.map(({ reply, redelivered }) => ({ correlationId: reply.correlationId, redelivered })),
      );
      return deliveries.map(({ reply, redelivered }): ReplyOutcome => {
        if (reply.correlationId === 'job:bad') return { kind: 'poisoned', reason: 'it killed the manager' };
        if (reply.correlationId === 'job:flaky' && !redelivered)
          return { kind: 'retry', error: new Error('later') };
        return { kind: 'done' };
      });
    });

    // Act
    for (const job of ['job:fine', 'job:flaky', 'job:bad'])
      await transport.reply('workflow-manager', job, '{}');

    // Assess
    await eventually('the handed-back reply to come again', () => seen.length === 4);
    expect(seen).toEqual([
      { correlationId: 'job:fine', redelivered: false },
      { correlationId: 'job:flaky', redelivered: false },
      { correlationId: 'job:bad', redelivered: false },
      { correlationId: 'job:flaky', redelivered: true },
    ]);
    await eventually('the reply queue to empty', () => broker.depth('workflow-manager') === 0);
    expect(broker.depth(memoryPoisonQueueOf('workflow-manager'))).toBe(1);
  });
});
