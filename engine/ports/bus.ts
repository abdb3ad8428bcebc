import type { StepRequest } from '../job/types.js';

/** The queue workers reply to unless told otherwise: the original workflow-manager's name (protocol.md). */
export const DEFAULT_REPLY_QUEUE = 'workflow-manager';

/** A reply from a worker, as any transport delivers it (RabbitMQ, Amazon MQ, SQS). */
export interface InboundReply {
  /** `<job uuid>:<step>`, when the message carried one. */
  correlationId?: string;
  /** The raw body text. */
  body: string;
  /** The AMQP `type` property or SQS `type` attribute: `error`, `heartbeat`, or absent for a reply. */
  type?: string;
  /** `x-attempt` / `attempt`, when the worker echoed it. */
  attempt?: number;
  /**
   * `x-retryable` (AMQP header, SQS attribute): false when the worker said an error reply must not be
   * retried; the readers set it only from boolean false or the text `false` (protocol.md).
   */
  retryable?: boolean;
}

/**
 * Sends step requests to workers' queues (protocol.md). Replies come back through the host: the
 * local reply consumer, or the Lambda event source on the reply queue.
 */
export interface Bus {
  /** Resolves once the broker holds every request (publisher confirms, or SendMessage succeeded). */
  send(requests: readonly StepRequest[]): Promise<void>;
  /** Makes sure step queues exist before the first request goes to them. */
  ensureQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<void>;
  /** Throws when the broker cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by a bus for a request it can never send (too large, invalid queue name): not retryable. */
export class UndeliverableError extends Error {
  constructor(
    message: string,
    readonly correlationId: string,
  ) {
    super(message);
    this.name = 'UndeliverableError';
  }
}
