import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bus, parseCorrelationId, type StepRequest } from '../../engine/index.js';
import { aRequestWithEveryField } from '../support/every-field.js';
import { uuid } from '../support/factories.js';

export interface BusUnderTest {
  bus: Bus;
  /**
   * Where each field of a request travels in this bus's messages, null where it does not: the
   * adapter's own table (`REQUEST_IN_AMQP`, …), which tsc holds to every field of StepRequest.
   */
  placement: Record<keyof StepRequest, string | null>;
  /** The vhost requests are sent on (on RabbitMQ, one that exists). */
  vhost: string;
  /** A step queue for one test (made where the bus needs it made first). */
  aQueue(): Promise<string>;
  /** The next request in `queue`, read back from the message a worker receives there. */
  receive(queue: string): Promise<Partial<StepRequest>>;
  cleanup(): Promise<void>;
}

/** A request's job and step, as a worker reads them from its correlation id. */
export function fromCorrelationId(
  correlationId: string,
): Pick<StepRequest, 'jobId' | 'step' | 'correlationId'> {
  const parsed = parseCorrelationId(correlationId);
  if (!parsed) throw new Error(`"${correlationId}" is not a correlation id`);
  return { ...parsed, correlationId };
}

/**
 * What every `Bus` must do with a request. Each bus's test file calls this with a factory for a bus
 * and a way to read what a worker receives.
 */
export function describeBusContract(
  name: string,
  open: () => Promise<BusUnderTest>,
  options: { timeout?: number } = {},
): void {
  describe(`Bus contract: ${name}`, { timeout: options.timeout ?? 30_000 }, () => {
    let subject: BusUnderTest;
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    it('carries every field of a request its placement names, and none it says it leaves out', async () => {
      // Prepare
      const queue = await subject.aQueue();
      const request = aRequestWithEveryField({ jobId: uuid(), queue, vhost: subject.vhost });

      // Act
      await subject.bus.send([request]);
      const received = await subject.receive(queue);

      // Assess
      const placed = Object.fromEntries(
        Object.entries(request).filter(([field]) => subject.placement[field as keyof StepRequest] !== null),
      );
      expect(received).toEqual(placed);
    });
  });
}
