import { describe, expect, it } from 'vitest';
import type { InboundReply, StepRequest } from '../../../../engine/index.js';
import {
  MemoryBroker,
  MemoryBus,
  MemoryWorkerTransport,
  REQUEST_IN_MEMORY,
} from '../../../../functions/adapters/memory/bus.js';
import { uuid } from '../../../support/factories.js';
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
    bus.consumeReplies(async (batch) => {
      replies.push(...batch);
    });

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
