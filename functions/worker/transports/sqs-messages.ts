import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { UndeliverableError } from '../../../engine/index.js';
import { readToken, TOKEN_ATTRIBUTE } from '../../transport/request-token.js';
import { RETRYABLE_HEADER } from '../../transport/retryable.js';
import {
  numberAttribute,
  SQS_MAX_MESSAGE_BYTES,
  sqsMessageSize,
  stringAttribute,
} from '../../transport/sqs/message.js';
import { WORKER_HEADER } from '../../transport/worker-name.js';
import type { ReplyOptions } from '../../transport/worker-transport.js';

/**
 * The SQS side of protocol.md ("SQS") that every SQS worker shares, whether it polls the step queue
 * itself (`SqsWorkerTransport`) or Lambda's event source hands it the messages (`lambdaWorker`).
 */

/** What a request says, read from its message attributes (the SDK's and Lambda's spellings differ). */
export interface SqsRequestFields {
  messageId: string | undefined;
  correlationId: string | undefined;
  replyTo: string | undefined;
  attempt: string | undefined;
  /** The `token` attribute. */
  token: string | undefined;
  /** `ApproximateReceiveCount`. */
  receiveCount: string | undefined;
  body: string | undefined;
}

export interface SqsRequest {
  correlationId: string;
  replyTo: string;
  body: string;
  attempt?: number;
  deliveryCount?: number;
  token?: string;
}

/**
 * The request in a message, or why it cannot be answered: without `correlation_id` and `reply_to` no
 * reply can reach the manager. Such a message is left alone: after the queue's receive limit it ends
 * in the step dead-letter queue.
 */
export function sqsRequestOf(fields: SqsRequestFields, queueName: string): SqsRequest | Error {
  const { correlationId, replyTo } = fields;
  if (!correlationId || !replyTo) {
    return new Error(
      `message ${fields.messageId} on ${queueName} has no correlation_id or reply_to attribute: not handled`,
    );
  }
  const request: SqsRequest = { correlationId, replyTo, body: fields.body ?? '' };
  const attempt = positiveInteger(fields.attempt);
  if (attempt !== undefined) request.attempt = attempt;
  const deliveryCount = positiveInteger(fields.receiveCount);
  if (deliveryCount !== undefined) request.deliveryCount = deliveryCount;
  const token = readToken(fields.token);
  if (token !== undefined) request.token = token;
  return request;
}

/** Sends a reply to the reply queue's URL, refusing (UndeliverableError) one over SQS's 1 MiB. */
export async function sendSqsReply(
  client: SQSClient,
  replyTo: string,
  correlationId: string,
  body: string,
  options: ReplyOptions = {},
): Promise<void> {
  // SQS refuses an empty body; protocol.md lets a reply's body be empty or `null` alike.
  const messageBody = body === '' ? 'null' : body;
  const attributes: Record<string, MessageAttributeValue> = {
    correlation_id: stringAttribute(correlationId),
  };
  if (options.type) attributes.type = stringAttribute(options.type);
  if (options.attempt !== undefined) attributes.attempt = numberAttribute(options.attempt);
  if (options.retryable === false) attributes[RETRYABLE_HEADER] = stringAttribute('false');
  if (options.token !== undefined) attributes[TOKEN_ATTRIBUTE] = stringAttribute(options.token);
  if (options.worker !== undefined) attributes[WORKER_HEADER] = stringAttribute(options.worker);
  const size = sqsMessageSize(messageBody, attributes);
  if (size > SQS_MAX_MESSAGE_BYTES) {
    throw new UndeliverableError(
      `the reply to ${correlationId} is ${size} bytes (body and message attributes), over the SQS limit ` +
        `of ${SQS_MAX_MESSAGE_BYTES} bytes (1 MiB); it was not sent`,
      correlationId,
    );
  }
  await client.send(
    new SendMessageCommand({ QueueUrl: replyTo, MessageBody: messageBody, MessageAttributes: attributes }),
  );
}

function positiveInteger(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
