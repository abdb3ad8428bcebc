import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttribute, SQSRecord } from 'aws-lambda';
import type { InboundReply } from '../../../engine/index.js';
import { readToken, TOKEN_ATTRIBUTE } from '../../transport/request-token.js';
import { RETRYABLE_HEADER, readRetryable } from '../../transport/retryable.js';
import { WORKER_HEADER } from '../../transport/worker-name.js';

/** A reply as the Lambda event source delivers it, or as ReceiveMessage returns it. */
export type SqsReplyMessage = Pick<SQSRecord, 'body' | 'messageAttributes'> | Message;

/**
 * Reads a worker's reply from the reply queue (protocol.md, "SQS"): the `correlation_id`, `type`,
 * `attempt`, `x-retryable` and `x-worker` message attributes, and the body as it came.
 */
export function parseSqsReply(message: SqsReplyMessage): InboundReply {
  const attribute = 'messageAttributes' in message ? lambdaAttribute(message) : sdkAttribute(message);
  const reply: InboundReply = { body: ('body' in message ? message.body : message.Body) ?? '' };
  const correlationId = attribute('correlation_id');
  if (correlationId !== undefined) reply.correlationId = correlationId;
  const type = attribute('type');
  if (type !== undefined) reply.type = type;
  const attempt = parseAttempt(attribute('attempt'));
  if (attempt !== undefined) reply.attempt = attempt;
  const retryable = readRetryable(attribute(RETRYABLE_HEADER));
  if (retryable !== undefined) reply.retryable = retryable;
  const token = readToken(attribute(TOKEN_ATTRIBUTE));
  if (token !== undefined) reply.token = token;
  const worker = attribute(WORKER_HEADER);
  if (worker !== undefined) reply.worker = worker;
  return reply;
}

function lambdaAttribute(record: Pick<SQSRecord, 'messageAttributes'>): (name: string) => string | undefined {
  return (name) => {
    const value: SQSMessageAttribute | undefined = record.messageAttributes[name];
    return value?.stringValue;
  };
}

function sdkAttribute(message: Message): (name: string) => string | undefined {
  return (name) => {
    const value: MessageAttributeValue | undefined = message.MessageAttributes?.[name];
    return value?.StringValue;
  };
}

/** A positive whole number, whether the worker sent it as a Number or a String attribute. */
function parseAttempt(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const attempt = Number(text.trim());
  return Number.isSafeInteger(attempt) && attempt > 0 ? attempt : undefined;
}
