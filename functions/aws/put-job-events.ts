import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsCommandOutput,
  type PutEventsRequestEntry,
} from '@aws-sdk/client-eventbridge';
import { entrySize } from './job-events.js';

/**
 * PutEvents takes at most 10 entries, and 256 KB of them, a request.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevents.html
 */
export const PUT_EVENTS_MAX_ENTRIES = 10;
export const PUT_EVENTS_MAX_BYTES = 256 * 1024;

/** An entry and the stream record it came from. */
export interface SourcedEntry {
  entry: PutEventsRequestEntry;
  sequenceNumber: string;
}

/**
 * Sends the entries, in order, in requests of at most 10 entries and 256 KB. At the first request
 * that does not go through whole (the call fails, or EventBridge refuses some entries:
 * `FailedEntryCount`), it stops and returns the sequence number of the earliest record with an entry
 * not sent: the event source mapping retries the batch from that record (ReportBatchItemFailures).
 * Entries of later records are not sent, so a retry repeats as few as it can.
 */
export async function putInOrder(
  client: EventBridgeClient,
  entries: readonly SourcedEntry[],
  onRefused: (refused: { errorCode?: string; errorMessage?: string; sequenceNumber: string }) => void,
): Promise<string | undefined> {
  for (const batch of batchesOf(entries)) {
    let result: PutEventsCommandOutput;
    try {
      result = await client.send(new PutEventsCommand({ Entries: batch.map((sourced) => sourced.entry) }));
    } catch (error) {
      const first = batch[0] as SourcedEntry;
      onRefused({
        errorCode: (error as Error).name,
        errorMessage: (error as Error).message,
        sequenceNumber: first.sequenceNumber,
      });
      return first.sequenceNumber;
    }
    if (!result.FailedEntryCount) continue;
    // Result entries are in the request's order; a refused one has an ErrorCode and no EventId.
    const failed = Math.max(
      0,
      batch.findIndex((_, n) => !result.Entries?.[n]?.EventId),
    );
    const first = batch[failed] as SourcedEntry;
    onRefused({
      errorCode: result.Entries?.[failed]?.ErrorCode,
      errorMessage: result.Entries?.[failed]?.ErrorMessage,
      sequenceNumber: first.sequenceNumber,
    });
    return first.sequenceNumber;
  }
  return undefined;
}

/** Consecutive runs of at most 10 entries and 256 KB (one entry is far smaller: no error message is long). */
export function batchesOf<T extends { entry: PutEventsRequestEntry }>(entries: readonly T[]): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const sourced of entries) {
    const size = entrySize(sourced.entry);
    if (batch.length === PUT_EVENTS_MAX_ENTRIES || (batch.length && bytes + size > PUT_EVENTS_MAX_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(sourced);
    bytes += size;
  }
  if (batch.length) batches.push(batch);
  return batches;
}
