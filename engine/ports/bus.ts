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
  /**
   * The request's token, echoed (`x-switchyard-token` header, `token` attribute): with reply
   * authentication on, a reply without the right one is ignored (protocol.md).
   */
  token?: string;
  /**
   * Who replied: the `x-worker` header or attribute, else the AMQP `app_id` (the SDK sends its host
   * and pid unless told otherwise). The job's history names it beside the attempt it answered.
   */
  worker?: string;
}

/**
 * Sends step requests to workers' queues (protocol.md). Replies come back through the host: the
 * local reply consumer, or the Lambda event source on the reply queue.
 */
export interface Bus {
  /**
   * Resolves once the broker holds every request (publisher confirms, or SendMessage succeeded).
   * Otherwise rejects with an `AggregateError` of one `UndeliverableError` or `RetryableSendError`
   * per request not sent: every request it does not list was sent. Any other rejection says
   * nothing of what was sent (the whole call may be sent again).
   */
  send(requests: readonly StepRequest[], options?: SendOptions): Promise<void>;
  /** Makes sure step queues exist before the first request goes to them. */
  ensureQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<void>;
  /** Throws when the broker cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * What the broker says of these step queues now (`GET /api/queues`): messages ready and consumers.
   * Looks only: a queue that does not exist is reported so, never created. A bus that cannot tell
   * leaves this out.
   */
  inspectQueues?(queues: readonly { queue: string; vhost: string | null }[]): Promise<QueueHealth[]>;
}

/** One step queue as the broker sees it. */
export interface QueueHealth {
  queue: string;
  vhost: string | null;
  /** false: the broker has no such queue (no request was sent to it yet, or it was deleted). */
  exists: boolean;
  /** Messages waiting for a consumer (SQS: ApproximateNumberOfMessages). */
  ready?: number;
  /** Messages taken by a consumer and not yet acknowledged or deleted, when the broker says (SQS). */
  inFlight?: number;
  /** Consumers of the queue; `unknown` where the broker does not count them (SQS). */
  consumers?: number | 'unknown';
  /** Why the queue could not be looked at (the broker unreachable, a vhost refused). */
  error?: string;
}

export interface SendOptions {
  /**
   * Called with each request (the object given) as soon as the broker holds it, before `send`
   * resolves: the caller may record it as sent at once, so that a crash during a long send re-sends
   * only what was not confirmed. A bus may also report nothing here and let `send` say it all.
   */
  onSent?: (request: StepRequest) => void;
  /**
   * The token each request carries to its worker (`x-switchyard-token` header, `token` attribute),
   * made by the manager from its key: a bus only writes it on the message.
   */
  tokenOf?: (request: StepRequest) => string;
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

/**
 * Thrown by a bus for a request the broker did not take this time (a full queue refusing it, a
 * throttled or unreachable service, no confirm in time): sending it later may work.
 */
export class RetryableSendError extends Error {
  constructor(
    message: string,
    readonly correlationId: string,
    /** What the broker said, when it said something: `nack`, `ThrottlingException`… */
    readonly code = 'Unknown',
  ) {
    super(message);
    this.name = 'RetryableSendError';
  }
}
