import type { MessageAttributeValue } from '@aws-sdk/client-sqs';

/** SQS's limit for one message and for one SendMessageBatch: body plus message attributes, 1 MiB. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** SendMessageBatch takes at most ten entries. */
export const SQS_MAX_BATCH_ENTRIES = 10;

/**
 * The size SQS counts against the limit: the body's UTF-8 bytes, plus each attribute's name, data
 * type and value.
 */
export function sqsMessageSize(body: string, attributes: Record<string, MessageAttributeValue>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attribute] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attribute.DataType ?? '', 'utf8');
    if (attribute.StringValue !== undefined) size += Buffer.byteLength(attribute.StringValue, 'utf8');
    if (attribute.BinaryValue !== undefined) size += attribute.BinaryValue.byteLength;
  }
  return size;
}

/** The characters of a standard queue's name: letters, digits, hyphens and underscores. */
export const SQS_QUEUE_CHARACTERS = /^[A-Za-z0-9_-]+$/;
/** A standard queue's name has at most 80 characters. */
export const SQS_MAX_QUEUE_NAME = 80;

/** A standard queue's name: 1 to 80 letters, digits, hyphens and underscores. */
export function isValidSqsQueueName(name: string): boolean {
  return name.length <= SQS_MAX_QUEUE_NAME && SQS_QUEUE_CHARACTERS.test(name);
}

export function stringAttribute(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
}

export function numberAttribute(value: number): MessageAttributeValue {
  return { DataType: 'Number', StringValue: String(value) };
}

/** True for an SDK error that says the queue does not exist (JSON and query protocol names). */
export function isQueueDoesNotExist(error: unknown): boolean {
  const name = error instanceof Error ? error.name : undefined;
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue';
}
