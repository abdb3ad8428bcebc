import type { Message } from 'amqplib';
import type { InboundReply } from '../../../engine/index.js';
import { attemptOf, stringProperty } from '../../transport/amqp/message.js';
import { readToken, TOKEN_HEADER } from '../../transport/request-token.js';
import { RETRYABLE_HEADER, readRetryable } from '../../transport/retryable.js';
import { readWorkerHeader, WORKER_HEADER } from '../../transport/worker-name.js';

/** A reply as the manager reads it, from any AMQP message on its reply queue. */
export function toInboundReply(message: Message): InboundReply {
  const reply: InboundReply = { body: message.content.toString('utf8') };
  const correlationId = stringProperty(message.properties.correlationId);
  if (correlationId !== undefined) reply.correlationId = correlationId;
  const type = stringProperty(message.properties.type);
  if (type !== undefined) reply.type = type;
  const attempt = attemptOf(message.properties.headers);
  if (attempt !== undefined) reply.attempt = attempt;
  const retryable = readRetryable(message.properties.headers?.[RETRYABLE_HEADER]);
  if (retryable !== undefined) reply.retryable = retryable;
  const token = readToken(message.properties.headers?.[TOKEN_HEADER]);
  if (token !== undefined) reply.token = token;
  const worker =
    readWorkerHeader(message.properties.headers?.[WORKER_HEADER]) ?? stringProperty(message.properties.appId);
  if (worker !== undefined) reply.worker = worker;
  return reply;
}
