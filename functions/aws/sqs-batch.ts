import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { Logger } from '../telemetry/telemetry.js';

export interface SqsBatchWork {
  /** Handles the whole batch in one call (one store round for all its messages). */
  all(records: readonly SQSRecord[]): Promise<void>;
  /** Handles one message alone: used only when `all` failed, to find the messages that fail. */
  one(record: SQSRecord): Promise<void>;
}

/**
 * A partial batch response for an SQS event source with `reportBatchItemFailures`: the batch is
 * handled in one call; when that fails, each message is handled again on its own (the handling is
 * idempotent, so what the failed call already stored is not done twice) and only the messages that
 * still fail are reported, to come back after their visibility timeout. The others are deleted.
 */
export async function settleSqsBatch(
  records: readonly SQSRecord[],
  work: SqsBatchWork,
  logger: Logger,
): Promise<SQSBatchResponse> {
  if (records.length === 0) return { batchItemFailures: [] };
  try {
    await work.all(records);
    return { batchItemFailures: [] };
  } catch (error) {
    logger.warn('batch failed; handling its messages one at a time', { error, size: records.length });
  }
  const outcomes = await Promise.allSettled(records.map((record) => work.one(record)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'fulfilled') return;
    const record = records[index] as SQSRecord;
    logger.error('message failed; it comes back after its visibility timeout', {
      messageId: record.messageId,
      correlationId: record.messageAttributes?.correlation_id?.stringValue,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount) || undefined,
      error: outcome.reason,
    });
    batchItemFailures.push({ itemIdentifier: record.messageId });
  });
  return { batchItemFailures };
}
