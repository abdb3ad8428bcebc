/**
 * What the worker SDK needs from a message system. One implementation per bus:
 * `transports/rabbitmq.ts` (RabbitMQ and Amazon MQ) and `transports/sqs.ts`.
 */
export interface WorkerDelivery {
  /** `<job uuid>:<step>` */
  correlationId: string;
  /** Where the reply goes: a queue name (RabbitMQ) or a queue URL (SQS). */
  replyTo: string;
  body: string;
  /** The `x-attempt` header / `attempt` attribute, when present. */
  attempt?: number;
  /**
   * How many times the broker has delivered this request, this delivery included, when it knows
   * (SQS `ApproximateReceiveCount`, counted across every worker process). Absent on RabbitMQ, where
   * the SDK counts deliveries in the process.
   */
  deliveryCount?: number;
  /** The request's token (`x-switchyard-token` header / `token` attribute), echoed on every reply. */
  token?: string;
  /** Acknowledge (RabbitMQ ack, SQS DeleteMessage): only after the reply is confirmed. */
  ack(): Promise<void>;
  /** Hand the request back for redelivery (RabbitMQ nack with requeue; SQS: make it visible again). */
  reject(): Promise<void>;
}

export type ReplyType = 'error' | 'heartbeat' | 'abort' | 'suspend';

/** What a reply says beside its body. */
export interface ReplyOptions {
  type?: ReplyType;
  /** The request's attempt, echoed (`x-attempt` header / `attempt` attribute). */
  attempt?: number;
  /** `false` on an error reply: the step must not be retried (`x-retryable: false`). */
  retryable?: false;
  /** The request's token, echoed: a manager with reply authentication on needs it. */
  token?: string;
  /** Who replies (`x-worker`): the job's history names it beside the attempt. */
  worker?: string;
}

export interface WorkerTransport {
  /** Starts consuming `queue` with at most `concurrency` requests in hand at once. */
  consume(
    queue: string,
    concurrency: number,
    onDelivery: (delivery: WorkerDelivery) => Promise<void>,
  ): Promise<void>;
  /** Publishes a reply and resolves once the broker has it (confirms / SendMessage success). */
  reply(replyTo: string, correlationId: string, body: string, options?: ReplyOptions): Promise<void>;
  /** Stops taking new requests; resolves when the consumer is cancelled. */
  stopConsuming(): Promise<void>;
  close(): Promise<void>;
}
