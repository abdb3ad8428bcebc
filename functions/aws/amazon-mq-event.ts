import type { InboundReply } from '../../engine/index.js';
import { attemptOf, stringProperty } from '../transport/amqp/message.js';
import { readToken, TOKEN_HEADER } from '../transport/request-token.js';
import { RETRYABLE_HEADER, readRetryable } from '../transport/retryable.js';
import { WORKER_HEADER } from '../transport/worker-name.js';

/**
 * A header value as the Amazon MQ event source mapping writes it: numbers and booleans as they are,
 * AMQP long strings as `{"bytes": [...]}` (their UTF-8 bytes), tables as objects, arrays as lists.
 */
export type AmazonMqHeaderValue =
  | number
  | boolean
  | string
  | null
  | { bytes: number[] }
  | AmazonMqHeaderValue[]
  | { [key: string]: AmazonMqHeaderValue };

/** `basicProperties` of a message, as the Lambda guide documents them ("Using Lambda with Amazon MQ"). */
export interface AmazonMqBasicProperties {
  contentType?: string | null;
  contentEncoding?: string | null;
  headers?: Record<string, AmazonMqHeaderValue> | null;
  deliveryMode?: number | null;
  priority?: number | null;
  correlationId?: string | null;
  replyTo?: string | null;
  expiration?: string | null;
  messageId?: string | null;
  timestamp?: string | null;
  type?: string | null;
  userId?: string | null;
  appId?: string | null;
  clusterId?: string | null;
  bodySize?: number | null;
}

export interface AmazonMqRabbitMessage {
  basicProperties: AmazonMqBasicProperties;
  redelivered: boolean;
  /** The body, base64. */
  data: string;
}

/** The event an Amazon MQ for RabbitMQ event source mapping invokes the function with. */
export interface AmazonMqRabbitEvent {
  eventSource: 'aws:rmq';
  eventSourceArn: string;
  /** By `<queue>::<vhost>`, e.g. `workflow-manager::/`. */
  rmqMessagesByQueue: Record<string, AmazonMqRabbitMessage[]>;
}

/** Every message of the event as a reply, queue after queue, in the order the event lists them. */
export function amazonMqReplies(event: AmazonMqRabbitEvent): InboundReply[] {
  const replies: InboundReply[] = [];
  for (const messages of Object.values(event.rmqMessagesByQueue ?? {})) {
    for (const message of messages) replies.push(amazonMqReply(message));
  }
  return replies;
}

/**
 * One message as the manager reads a reply: protocol.md's `correlation_id`, `type`, `x-attempt` and
 * `x-retryable` (a boolean header stays a boolean in the event; a string one comes as its bytes).
 */
export function amazonMqReply(message: AmazonMqRabbitMessage): InboundReply {
  const properties = message.basicProperties ?? {};
  const reply: InboundReply = { body: Buffer.from(message.data ?? '', 'base64').toString('utf8') };
  const correlationId = stringProperty(properties.correlationId);
  if (correlationId !== undefined) reply.correlationId = correlationId;
  const type = stringProperty(properties.type);
  if (type !== undefined) reply.type = type;
  const attempt = attemptOf({ 'x-attempt': headerScalar(properties.headers?.['x-attempt']) });
  if (attempt !== undefined) reply.attempt = attempt;
  const flag = properties.headers?.[RETRYABLE_HEADER];
  const retryable = readRetryable(typeof flag === 'boolean' ? flag : headerScalar(flag));
  if (retryable !== undefined) reply.retryable = retryable;
  const token = readToken(headerScalar(properties.headers?.[TOKEN_HEADER]));
  if (token !== undefined) reply.token = token;
  const named = headerScalar(properties.headers?.[WORKER_HEADER]);
  const worker = typeof named === 'string' ? named : stringProperty(properties.appId);
  if (worker !== undefined) reply.worker = worker;
  return reply;
}

/** A header as a number or a string (a long string's bytes decoded as UTF-8); undefined otherwise. */
export function headerScalar(value: AmazonMqHeaderValue | undefined): number | string | undefined {
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value) && Array.isArray(value.bytes)) {
    const bytes = value.bytes as unknown[];
    if (bytes.every((byte) => typeof byte === 'number')) {
      return Buffer.from(bytes as number[]).toString('utf8');
    }
  }
  return undefined;
}
