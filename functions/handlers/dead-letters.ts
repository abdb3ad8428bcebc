import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import { settleEachSqsRecord } from '../aws/sqs-batch.js';
import { sqsBusFactory } from '../aws/sqs-bus-factory.js';
import { readToken, TOKEN_ATTRIBUTE } from '../transport/request-token.js';

export type DeadLettersHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/**
 * Requests that exhausted their step queue's `maxReceiveCount` (protocol.md, SQS): each fails its
 * attempt, if that attempt is still the current one, with a message that names the queue and the
 * receive count. A message without a correlation id names no job: it is logged and dropped.
 */
export function createDeadLettersHandler(deps: ManagerHandlerDeps): DeadLettersHandler {
  const { manager, telemetry } = deps;
  const failAttempt = async (record: SQSRecord): Promise<void> => {
    const correlationId = record.messageAttributes?.correlation_id?.stringValue;
    if (!correlationId) {
      telemetry.logger.warn('dead-lettered message without a correlation_id; dropped', {
        messageId: record.messageId,
        queue: queueName(record.attributes?.DeadLetterQueueSourceArn ?? record.eventSourceARN),
      });
      return;
    }
    const attempt = positiveInteger(record.messageAttributes?.attempt?.stringValue);
    const detail = deadLetterDetail(record);
    telemetry.logger.warn('request dead-lettered', { correlationId, attempt, detail });
    await manager.deadLettered(
      correlationId,
      attempt,
      detail,
      readToken(record.messageAttributes?.[TOKEN_ATTRIBUTE]?.stringValue),
    );
  };
  return (event, context) =>
    drainingInvocation(deps, context, () =>
      settleEachSqsRecord(event.Records, failAttempt, telemetry.logger),
    );
}

/** Why the attempt failed, in the words a person reading the job sees. */
export function deadLetterDetail(record: SQSRecord): string {
  const source = record.attributes?.DeadLetterQueueSourceArn;
  const from = source ? `step queue ${queueName(source)}` : 'its step queue';
  const receives = Number(record.attributes?.ApproximateReceiveCount);
  const count = Number.isFinite(receives) && receives > 0 ? ` (receive count ${receives})` : '';
  return (
    `no worker answered the request: SQS received it from ${from} as many times as the queue allows ` +
    `and moved it to the dead-letter queue ${queueName(record.eventSourceARN)}${count}`
  );
}

/** The queue's name from its ARN (`arn:aws:sqs:<region>:<account>:<name>`). */
function queueName(arn: string | undefined): string {
  return arn?.split(':').at(-1) ?? 'unknown';
}

function positiveInteger(text: string | undefined): number | undefined {
  const value = Number(text);
  return text !== undefined && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

const fromEnv = fromEnvironment({ sqs: sqsBusFactory }, createDeadLettersHandler);

export const handler: DeadLettersHandler = async (event, context) => (await fromEnv())(event, context);
