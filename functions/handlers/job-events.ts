import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { expiredCountsUpdate } from '../adapters/dynamodb/expired-counts.js';
import { removedByTtl } from '../adapters/dynamodb/expired-jobs.js';
import { type StreamImage, streamHeadOf } from '../adapters/dynamodb/stream-heads.js';
import { eventSourceOf, type HeadChangeRecord, jobEventsOf, putEventsEntryOf } from '../aws/job-events.js';
import { createLambdaTelemetry } from '../aws/lambda-telemetry.js';
import { putInOrder, type SourcedEntry } from '../aws/put-job-events.js';
import { sdkClientConfig } from '../aws/sdk-clients.js';
import type { Logger } from '../telemetry/telemetry.js';

export type JobEventsHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

/**
 * The table's stream, filtered to job heads (infra/constructs/job-events.ts), as EventBridge events on
 * the account's default bus: a job's status change and a step waiting for someone (docs/deploying.md,
 * "Events on EventBridge"). Entries go in order, 10 a request; at the first refused one the batch
 * reports that record as its first failure (ReportBatchItemFailures), and the event source retries
 * from it, a bounded number of times, then records the rest in its on-failure queue.
 *
 * With `counts`, a finished top-level head that TTL deleted is taken off the finished counts, once:
 * only for records before the first failed one (the event source redelivers from that one on).
 */
export function createJobEventsHandler(deps: {
  events: EventBridgeClient;
  /** The events' `source`: `switchyard.<stack>`. */
  source: string;
  stack: string;
  logger: Logger;
  /** The table whose finished counts TTL's deletions are taken off. */
  counts?: { client: DynamoDBClient; tableName: string };
}): JobEventsHandler {
  return async (event) => {
    const entries: SourcedEntry[] = [];
    const expired: {
      index: number;
      sequenceNumber: string;
      head: NonNullable<ReturnType<typeof streamHeadOf>>;
    }[] = [];
    event.Records.forEach((record, index) => {
      const sequenceNumber = record.dynamodb?.SequenceNumber;
      if (!sequenceNumber) return;
      if (record.eventName === 'REMOVE') {
        const head = removedByTtl(record)
          ? streamHeadOf(record.dynamodb?.OldImage as StreamImage)
          : undefined;
        if (head) expired.push({ index, sequenceNumber, head });
        return;
      }
      for (const jobEvent of jobEventsOf(headChange(record), deps.stack))
        entries.push({ entry: putEventsEntryOf(jobEvent, deps.source), sequenceNumber });
    });
    const failed = entries.length
      ? await putInOrder(deps.events, entries, (refused) =>
          deps.logger.warn('EventBridge refused job events; the batch is retried from their record', refused),
        )
      : undefined;
    const failedAt =
      failed === undefined
        ? event.Records.length
        : event.Records.findIndex((record) => record.dynamodb?.SequenceNumber === failed);
    for (const { index, sequenceNumber, head } of expired) {
      if (index >= failedAt || !deps.counts) break;
      const update = expiredCountsUpdate(head, deps.counts.tableName);
      if (!update) continue;
      try {
        await deps.counts.client.send(update);
      } catch (error) {
        deps.logger.warn('an expired job could not be taken off the counts; the batch is retried from it', {
          jobId: head.jobId,
          error: String(error),
        });
        return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
      }
    }
    deps.logger.debug('job events put', { records: event.Records.length, entries: entries.length });
    return { batchItemFailures: failed === undefined ? [] : [{ itemIdentifier: failed }] };
  };
}

function headChange(record: DynamoDBRecord): HeadChangeRecord {
  return {
    eventName: record.eventName,
    dynamodb: {
      NewImage: record.dynamodb?.NewImage as StreamImage | undefined,
      OldImage: record.dynamodb?.OldImage as StreamImage | undefined,
    },
  };
}

let built: JobEventsHandler | undefined;

export const handler: JobEventsHandler = (event) => {
  const stack = process.env.STACK_NAME;
  if (!stack) throw new Error('STACK_NAME is not set: the job-events function names its events by the stack');
  built ??= createJobEventsHandler({
    events: new EventBridgeClient(sdkClientConfig()),
    source: eventSourceOf(stack),
    stack,
    logger: createLambdaTelemetry({ logLevel: 'info' }).logger,
    // Not TABLE_NAME: that names the functions that run the manager (infra tests select them by it).
    ...(process.env.COUNTS_TABLE_NAME
      ? {
          counts: { client: new DynamoDBClient(sdkClientConfig()), tableName: process.env.COUNTS_TABLE_NAME },
        }
      : {}),
  });
  return built(event);
};
