import {
  type Bus,
  DEFAULT_REPLY_QUEUE,
  type InboundReply,
  type QueueHealth,
  type ReplyConsumption,
  type ReplyHandler,
  type ReplyIntake,
  type ReplyOutcome,
  type SendOptions,
  type StepRequest,
} from '../../../engine/index.js';
import type {
  ReplyOptions,
  ReplyType,
  WorkerDelivery,
  WorkerTransport,
} from '../../transport/worker-transport.js';

/** A message in the in-process broker. */
interface MemoryMessage {
  correlationId: string;
  replyTo: string;
  body: string;
  type?: ReplyType;
  attempt?: number;
  retryable?: false;
  token?: string;
  /** The worker that replied (`x-worker`). */
  worker?: string;
  /** It was handed out before and handed back. */
  redelivered?: true;
  /** Why the manager gave up on it (in the poison queue). */
  poisonedReason?: string;
}

type Consumer = (message: MemoryMessage, settle: (requeue: boolean) => void) => void;

interface MemoryQueue {
  messages: MemoryMessage[];
  consumers: { deliver: Consumer; capacity: number; inHand: number }[];
  next: number;
}

/**
 * Queues in this process: `switchyard serve --bus memory`, a try-out with no broker. Nothing
 * survives a restart; never a substitute for RabbitMQ in the tests that exercise the protocol.
 */
export class MemoryBroker {
  private readonly queues = new Map<string, MemoryQueue>();

  private queue(name: string): MemoryQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = { messages: [], consumers: [], next: 0 };
      this.queues.set(name, queue);
    }
    return queue;
  }

  publish(queueName: string, message: MemoryMessage): void {
    this.queue(queueName).messages.push(message);
    this.pump(queueName);
  }

  consume(queueName: string, capacity: number, deliver: Consumer): () => void {
    const queue = this.queue(queueName);
    const consumer = { deliver, capacity, inHand: 0 };
    queue.consumers.push(consumer);
    this.pump(queueName);
    return () => {
      queue.consumers = queue.consumers.filter((other) => other !== consumer);
    };
  }

  depth(queueName: string): number {
    return this.queues.get(queueName)?.messages.length ?? 0;
  }

  /** Consumers of the queue now. */
  consumerCount(queueName: string): number {
    return this.queues.get(queueName)?.consumers.length ?? 0;
  }

  private pump(queueName: string): void {
    const queue = this.queue(queueName);
    while (queue.messages.length && queue.consumers.length) {
      const ready = queue.consumers.filter((consumer) => consumer.inHand < consumer.capacity);
      if (!ready.length) return;
      const consumer = ready[queue.next++ % ready.length] as (typeof ready)[number];
      const message = queue.messages.shift() as MemoryMessage;
      consumer.inHand++;
      let settled = false;
      queueMicrotask(() =>
        consumer.deliver(message, (requeue) => {
          if (settled) return;
          settled = true;
          consumer.inHand--;
          if (requeue) queue.messages.push({ ...message, redelivered: true });
          this.pump(queueName);
        }),
      );
    }
  }
}

/**
 * Where each field of a request travels in an in-process message, or null where it does not: a
 * field added to StepRequest fails tsc here until it is placed. The bus contract
 * (test/functions/bus-contract.ts) reads every placed field back from the message a worker receives.
 */
export const REQUEST_IN_MEMORY = {
  jobId: 'correlationId, before the colon',
  step: 'correlationId, after the colon',
  queue: 'the queue it is published to',
  // One process, one broker: no vhosts.
  vhost: null,
  correlationId: 'correlationId',
  attempt: 'attempt',
  body: 'body, as JSON',
  // Nothing expires in this broker: a request for an attempt that ended is answered, and the reply ignored.
  deadline: null,
  // Resolved into the body before the bus is given the request (functions/manager/secret-bus.ts).
  secrets: null,
} as const satisfies Record<keyof StepRequest, string | null>;

/** Replies handed to the manager at once, at most. */
const MAX_REPLY_BATCH = 500;

/** Where the in-process broker keeps the replies the manager gave up on: `<reply queue>.poisoned`. */
export function memoryPoisonQueueOf(replyQueue: string): string {
  return `${replyQueue}.poisoned`;
}

/** The manager's side of the in-process broker: the Bus, and the reply intake. */
export class MemoryBus implements Bus, ReplyIntake {
  constructor(
    readonly broker: MemoryBroker,
    private readonly replyQueue = DEFAULT_REPLY_QUEUE,
  ) {}

  async send(requests: readonly StepRequest[], options: SendOptions = {}): Promise<void> {
    for (const request of requests) {
      this.broker.publish(request.queue, {
        correlationId: request.correlationId,
        replyTo: this.replyQueue,
        body: JSON.stringify(request.body),
        attempt: request.attempt,
        ...(options.tokenOf ? { token: options.tokenOf(request) } : {}),
      });
    }
  }

  async ensureQueues(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  /** Every queue exists in the in-process broker (it makes them as they are named). */
  async inspectQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<QueueHealth[]> {
    return queues.map(({ queue, vhost }) => ({
      queue,
      vhost,
      exists: true,
      ready: this.broker.depth(queue),
      consumers: this.broker.consumerCount(queue),
    }));
  }

  /**
   * The reply intake: feeds replies to `handle` in batches (one vhost: `options` has nothing to
   * choose) and settles each when it resolves: `done` taken off the queue, `retry` put back after
   * 100 ms (all of the batch when `handle` throws), `poisoned` moved to `<reply queue>.poisoned`.
   */
  async consumeReplies(handle: ReplyHandler): Promise<ReplyConsumption> {
    type Taken = { message: MemoryMessage; settle: (requeue: boolean) => void };
    let batch: Taken[] = [];
    let scheduled = false;
    // A reply the handler says nothing of comes again, as one it hands back.
    const settleOne = ({ message, settle }: Taken, outcome: ReplyOutcome | undefined): void => {
      if (outcome === undefined || outcome.kind === 'retry') {
        setTimeout(() => settle(true), 100);
        return;
      }
      if (outcome.kind === 'poisoned') {
        this.broker.publish(memoryPoisonQueueOf(this.replyQueue), {
          ...message,
          poisonedReason: outcome.reason,
        });
      }
      settle(false);
    };
    const flush = async (): Promise<void> => {
      scheduled = false;
      const taken = batch;
      batch = [];
      const deliveries = taken.map(({ message }) => ({
        reply: inboundReply(message),
        redelivered: message.redelivered === true,
      }));
      let outcomes: readonly ReplyOutcome[];
      try {
        outcomes = await handle(deliveries);
      } catch (error) {
        outcomes = taken.map(() => ({ kind: 'retry', error }));
      }
      for (const [index, item] of taken.entries()) settleOne(item, outcomes[index]);
    };
    const cancel = this.broker.consume(this.replyQueue, MAX_REPLY_BATCH, (message, settle) => {
      batch.push({ message, settle });
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => void flush());
      }
    });
    return { stop: async () => cancel() };
  }
}

function inboundReply(message: MemoryMessage): InboundReply {
  const reply: InboundReply = { correlationId: message.correlationId, body: message.body };
  if (message.type) reply.type = message.type;
  if (message.attempt !== undefined) reply.attempt = message.attempt;
  if (message.retryable === false) reply.retryable = false;
  if (message.token !== undefined) reply.token = message.token;
  if (message.worker !== undefined) reply.worker = message.worker;
  return reply;
}

/** The worker SDK's transport on the in-process broker. */
export class MemoryWorkerTransport implements WorkerTransport {
  private cancel?: () => void;

  constructor(private readonly broker: MemoryBroker) {}

  async consume(
    queue: string,
    concurrency: number,
    onDelivery: (delivery: WorkerDelivery) => Promise<void>,
  ): Promise<void> {
    this.cancel = this.broker.consume(queue, concurrency, (message, settle) => {
      const delivery: WorkerDelivery = {
        correlationId: message.correlationId,
        replyTo: message.replyTo,
        body: message.body,
        ack: async () => settle(false),
        reject: async () => settle(true),
      };
      if (message.attempt !== undefined) delivery.attempt = message.attempt;
      if (message.token !== undefined) delivery.token = message.token;
      void onDelivery(delivery);
    });
  }

  async reply(
    replyTo: string,
    correlationId: string,
    body: string,
    options: ReplyOptions = {},
  ): Promise<void> {
    this.broker.publish(replyTo, {
      correlationId,
      replyTo: '',
      body,
      type: options.type,
      attempt: options.attempt,
      ...(options.retryable === false ? { retryable: false } : {}),
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.worker !== undefined ? { worker: options.worker } : {}),
    });
  }

  async stopConsuming(): Promise<void> {
    this.cancel?.();
  }

  async close(): Promise<void> {
    this.cancel?.();
  }
}
