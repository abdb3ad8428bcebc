import type { Options } from 'amqplib';
import {
  MAX_AMQP_NAME_BYTES,
  type SendOptions,
  type StepRequest,
  UndeliverableError,
} from '../../../engine/index.js';
import type { OutgoingMessage } from '../../transport/amqp/publisher.js';
import { TOKEN_HEADER } from '../../transport/request-token.js';
import { REPLY_QUEUE_HEADER } from './dead-letters.js';

/**
 * Where each field of a request travels in its AMQP message (protocol.md, "RabbitMQ"), or null
 * where it does not: a field added to StepRequest fails tsc here until it is placed. The bus
 * contract (test/functions/bus-contract.ts) reads every placed field back from the message a worker
 * receives.
 */
export const REQUEST_IN_AMQP = {
  jobId: 'correlation_id, before the colon',
  step: 'correlation_id, after the colon',
  queue: 'the routing key, on the default exchange',
  vhost: 'the connection it is published on',
  correlationId: 'correlation_id',
  attempt: 'header x-attempt',
  body: 'the body, as JSON',
  deadline: 'expiration: the time left until it, at most the request TTL',
  // Resolved into the body before the bus is given the request (functions/manager/secret-bus.ts).
  secrets: null,
} as const satisfies Record<keyof StepRequest, string | null>;

export interface RequestMessageOptions {
  /** The `reply_to` of the request, also its `x-reply-to` header (routes a dead letter back). */
  replyQueue: string;
  /** Bodies above this many bytes are undeliverable. */
  maxBytes: number;
  /** The longest the request may stay in the broker, at most (undefined: until its deadline only). */
  requestTtlMs: number | undefined;
  now: number;
  /** The token the request carries to its worker (`SendOptions.tokenOf`), when replies are authenticated. */
  tokenOf?: SendOptions['tokenOf'];
}

/** A request as its AMQP message; throws `UndeliverableError` for one that can never be sent. */
export function requestMessage(request: StepRequest, options: RequestMessageOptions): OutgoingMessage {
  const queueBytes = Buffer.byteLength(request.queue);
  if (queueBytes === 0 || queueBytes > MAX_AMQP_NAME_BYTES || request.queue.startsWith('amq.')) {
    throw new UndeliverableError(
      `cannot send to queue "${request.queue}": a RabbitMQ queue name has 1 to ${MAX_AMQP_NAME_BYTES} bytes and does not start with "amq."`,
      request.correlationId,
    );
  }
  const content = Buffer.from(JSON.stringify(request.body));
  if (content.length > options.maxBytes) {
    throw new UndeliverableError(
      `the request for ${request.correlationId} has ${content.length} bytes, more than RabbitMQ takes (${options.maxBytes})`,
      request.correlationId,
    );
  }
  const publish: Options.Publish = {
    correlationId: request.correlationId,
    replyTo: options.replyQueue,
    contentType: 'application/json',
    deliveryMode: 2,
    // x-reply-to routes the request back to this manager should the broker dead-letter it.
    headers: {
      'x-attempt': request.attempt,
      [REPLY_QUEUE_HEADER]: options.replyQueue,
      ...(options.tokenOf ? { [TOKEN_HEADER]: options.tokenOf(request) } : {}),
    },
    // A queue deleted after we declared it would otherwise swallow the request silently.
    mandatory: true,
  };
  const ttl = ttlOf(request, options);
  if (ttl !== undefined) publish.expiration = String(ttl);
  return { queue: request.queue, content, options: publish };
}

/**
 * How long the request may stay in the broker, in whole milliseconds (at least 1): until the
 * attempt's deadline, and at most the request TTL. Undefined: no limit.
 */
function ttlOf(request: StepRequest, options: RequestMessageOptions): number | undefined {
  const left = request.deadline === undefined ? Number.POSITIVE_INFINITY : request.deadline - options.now;
  const ttl = Math.min(left, options.requestTtlMs ?? Number.POSITIVE_INFINITY);
  return Number.isFinite(ttl) ? Math.max(1, Math.ceil(ttl)) : undefined;
}
