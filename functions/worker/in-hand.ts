import type { WorkerDelivery } from '../transport/worker-transport.js';

/**
 * A request a handler works on. Once handed back (at shutdown, when its handler ran out of time) it is
 * the broker's again: a late ack or reject would settle a request this worker no longer holds.
 */
export class HeldRequest implements WorkerDelivery {
  readonly correlationId: string;
  readonly replyTo: string;
  readonly body: string;
  readonly attempt?: number;
  readonly deliveryCount?: number;
  readonly token?: string;
  private handed = false;

  constructor(private readonly delivery: WorkerDelivery) {
    this.correlationId = delivery.correlationId;
    this.replyTo = delivery.replyTo;
    this.body = delivery.body;
    if (delivery.attempt !== undefined) this.attempt = delivery.attempt;
    if (delivery.deliveryCount !== undefined) this.deliveryCount = delivery.deliveryCount;
    if (delivery.token !== undefined) this.token = delivery.token;
  }

  get handedBack(): boolean {
    return this.handed;
  }

  ack(): Promise<void> {
    return this.handed ? Promise.resolve() : this.delivery.ack();
  }

  reject(): Promise<void> {
    return this.handed ? Promise.resolve() : this.delivery.reject();
  }

  /** Gives the request back to the broker for another worker (RabbitMQ nack with requeue, SQS visible again). */
  handBack(): Promise<void> {
    if (this.handed) return Promise.resolve();
    this.handed = true;
    return this.delivery.reject();
  }
}

/** Whether `promise` settles within `ms` (waiting no longer). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
