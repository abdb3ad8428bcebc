import { type MessageAttributeValue, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/** The message attribute a poisoned reply carries in the reply dead-letter queue: why the manager gave up on it. */
export const POISONED_REASON_ATTRIBUTE = 'x-poisoned-reason';

/** Moves poisoned replies where an operator sees them. */
export interface ReplyPoisonQueue {
  /** Resolves once the queue holds a copy of each record, with its reason: only then may the original go. */
  hold(records: readonly { record: SQSRecord; reason: string }[]): Promise<void>;
}

/** SendMessageBatch takes at most this many messages. */
const BATCH = 10;

/**
 * The SQS bus's poison queue: the reply dead-letter queue (`<prefix>workflow-manager-dlq`, where SQS
 * itself moves a reply after the reply queue's 10 receives). A copy keeps the reply's body and
 * message attributes, plus `x-poisoned-reason`; the operator reads it there, and delivers it again
 * with the console's "Start DLQ redrive" (SQS moves it back to the reply queue).
 */
export class SqsReplyPoisonQueue implements ReplyPoisonQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async hold(records: readonly { record: SQSRecord; reason: string }[]): Promise<void> {
    for (let start = 0; start < records.length; start += BATCH) {
      const entries = records.slice(start, start + BATCH).map(({ record, reason }, index) => ({
        Id: String(index),
        MessageBody: record.body,
        MessageAttributes: {
          ...messageAttributes(record),
          [POISONED_REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason.slice(0, 1000) },
        },
      }));
      const { Failed } = await this.client.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
      );
      if (Failed?.length) {
        throw new Error(
          `the reply dead-letter queue refused ${Failed.length} poisoned replies: ${Failed[0]?.Message ?? Failed[0]?.Code}`,
        );
      }
    }
  }
}

/** A record's string and number attributes as SendMessage takes them (binary ones are left out). */
function messageAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue === undefined) continue;
    attributes[name] = { DataType: value.dataType, StringValue: value.stringValue };
  }
  return attributes;
}
