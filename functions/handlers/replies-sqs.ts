import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { RepliesInHand, ReplyDelivery } from '../../engine/index.js';
import { parseSqsReply } from '../adapters/sqs/reply.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import { sqsBusFactory } from '../aws/sqs-bus-factory.js';
import { type ReplyPoisonQueue, SqsReplyPoisonQueue } from '../aws/sqs-poison-queue.js';
import { ReplyPolicy } from '../manager/reply-policy.js';

export type RepliesSqsHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

export interface RepliesSqsDeps extends ManagerHandlerDeps {
  /** The store, for its journal of replies in hand. */
  store: RepliesInHand;
  /** Where poisoned replies go (the reply dead-letter queue); without it they come back until SQS moves them there. */
  poisonQueue?: ReplyPoisonQueue;
  /** This container's name in the journal. @default a random UUID */
  holder?: string;
}

/**
 * Workers' replies from the SQS reply queue, settled as the poison-reply policy says
 * (functions/manager/reply-policy.ts): the batch in one manager call, but that a message received
 * before (`ApproximateReceiveCount` above 1: a duplicate, handed back, or in hand when an invocation
 * crashed or timed out) is noted in the journal first, and goes alone when an invocation died with it
 * in hand. A malformed reply or one the manager records as
 * a failed attempt is no failure. A failure to store (throttling beyond the retries, an outage) is:
 * only the messages that fail come back, after the reply queue's visibility timeout. A poisoned reply
 * (its attempt failed) is copied to the reply dead-letter queue and deleted from the reply queue.
 */
export function createRepliesSqsHandler(deps: RepliesSqsDeps): RepliesSqsHandler {
  const { telemetry } = deps;
  const policy = new ReplyPolicy({
    manager: deps.manager,
    journal: deps.store,
    holder: deps.holder ?? randomUUID(),
    logger: telemetry.logger,
    metrics: telemetry.metrics,
  });
  return (event, context) =>
    drainingInvocation(deps, context, async () => {
      const records = event.Records;
      const outcomes = await policy.handle(records.map(toDelivery));
      const failed = new Set<SQSRecord>();
      const poisoned: { record: SQSRecord; reason: string }[] = [];
      outcomes.forEach((outcome, index) => {
        const record = records[index] as SQSRecord;
        if (outcome.kind === 'poisoned') poisoned.push({ record, reason: outcome.reason });
        if (outcome.kind !== 'retry') return;
        failed.add(record);
        telemetry.logger.error('message failed; it comes back after its visibility timeout', {
          messageId: record.messageId,
          correlationId: record.messageAttributes?.correlation_id?.stringValue,
          receiveCount: receiveCount(record),
          error: outcome.error,
        });
      });
      if (poisoned.length) {
        try {
          if (!deps.poisonQueue) throw new Error('no poison queue (REPLY_DEAD_LETTER_QUEUE_URL)');
          await deps.poisonQueue.hold(poisoned);
        } catch (error) {
          telemetry.logger.error('poisoned replies not moved; they come back', { error });
          for (const { record } of poisoned) failed.add(record);
        }
      }
      return { batchItemFailures: [...failed].map((record) => ({ itemIdentifier: record.messageId })) };
    });
}

function toDelivery(record: SQSRecord): ReplyDelivery {
  return { reply: parseSqsReply(record), redelivered: (receiveCount(record) ?? 1) > 1 };
}

function receiveCount(record: SQSRecord): number | undefined {
  return Number(record.attributes?.ApproximateReceiveCount) || undefined;
}

const fromEnv = fromEnvironment({ sqs: sqsBusFactory }, (container) =>
  createRepliesSqsHandler({
    ...container,
    poisonQueue:
      container.env.bus.kind === 'sqs' && container.env.bus.replyDeadLetterQueueUrl
        ? new SqsReplyPoisonQueue(container.sqs, container.env.bus.replyDeadLetterQueueUrl)
        : undefined,
  }),
);

export const handler: RepliesSqsHandler = async (event, context) => (await fromEnv())(event, context);
