import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { Logger } from '../telemetry/telemetry.js';

/** Handles one message alone; a rejection reports the message, to come back after its visibility timeout. */
export type SqsRecordWork = (record: SQSRecord) => Promise<void>;

export interface SqsBatchWork {
  /** Handles the whole batch in one call (one store round for all its messages). */
  all(records: readonly SQSRecord[]): Promise<void>;
  /** Handles one message alone: used only when `all` failed, to find the messages that fail. */
  one: SqsRecordWork;
}

/**
 * A partial batch response for an SQS event source with `reportBatchItemFailures`, by Powertools'
 * `BatchProcessor`: each message is handled on its own, all at once, and only those that fail are
 * reported. The others are deleted.
 */
export async function settleEachSqsRecord(
  records: readonly SQSRecord[],
  one: SqsRecordWork,
  logger: Logger,
): Promise<SQSBatchResponse> {
  const handleLoggingFailure = async (record: SQSRecord): Promise<void> => {
    try {
      await one(record);
    } catch (error) {
      logger.error('message failed; it comes back after its visibility timeout', {
        messageId: record.messageId,
        correlationId: record.messageAttributes?.correlation_id?.stringValue,
        receiveCount: Number(record.attributes?.ApproximateReceiveCount) || undefined,
        error,
      });
      throw error;
    }
  };
  // A batch that fails whole is reported whole rather than thrown, so that the handler still
  // drains its outbox and SQS still gets the failures as items, like any other partial failure.
  return processPartialResponse(
    { Records: [...records] },
    handleLoggingFailure,
    new BatchProcessor(EventType.SQS),
    {
      throwOnFullBatchFailure: false,
    },
  );
}

/**
 * The batch is handled in one call; when that fails, each message is handled again on its own (the
 * handling is idempotent, so what the failed call already stored is not done twice) by
 * `settleEachSqsRecord`.
 *
 * The first, whole-batch call is ours because Powertools cannot express it: its processors call a
 * handler per record (in parallel or in turn), never once with the batch, and handling each reply or
 * timer on its own costs a store round per message where the whole batch costs one.
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
  return settleEachSqsRecord(records, work.one, logger);
}
