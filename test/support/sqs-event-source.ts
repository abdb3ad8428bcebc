import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { aLambdaContext, sqsRecordFromMessage } from './aws-events.js';

/** A function as the SQS event source invokes it (with `reportBatchItemFailures`). */
export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface SqsEventSourceOptions {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  /**
   * One handler per lane: like Lambda, batches run at once in as many containers, each container
   * one batch at a time.
   */
  handlers: readonly SqsBatchHandler[];
  /** @default 10 (the stack's batchSize) */
  batchSize?: number;
  /** Long polling per ReceiveMessage. @default 1 */
  waitTimeSeconds?: number;
  /**
   * Lambda's `MaximumBatchingWindowInSeconds`: once a message is in, gather more (short polls)
   * until the batch is full or this much time has passed. @default 0
   */
  maxBatchingWindowMs?: number;
  /** How long a batch stays hidden from the other lanes while a handler has it. @default 30 */
  visibilityTimeoutSeconds?: number;
  /** Failed messages come back after this many seconds (Lambda: the queue's visibility timeout). @default 0 */
  retryAfterSeconds?: number;
  /**
   * Messages delivered twice: handled, then made visible again instead of deleted, so that they come
   * back once more, in another batch (SQS's at-least-once delivery).
   */
  duplicate?: (record: SQSRecord) => boolean;
  /**
   * The function's timeout, given to the handler's context and enforced: an invocation whose handler
   * has not answered within it fails, as Lambda ends a function that runs out of time ("the
   * invocation times out... Lambda retries the batch", https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html):
   * its messages come back after `retryAfterSeconds`, counted in `timeouts` and reported in `errors`.
   * @default 60000 (the stack's replies function)
   */
  functionTimeoutMs?: number;
  /**
   * A new container for the lane after one ran out of time (as Lambda starts a new one); without it
   * the lane goes on with the same handler, and a timeout is an error the test sees.
   */
  newHandler?: () => Promise<SqsBatchHandler>;
}

export interface SqsEventSourceStats {
  invocations: number;
  messages: number;
  /** Messages delivered a second time on purpose. */
  duplicated: number;
  /** Messages reported failed (or in a batch whose handler threw). */
  failed: number;
  /** Invocations that threw. */
  errors: number;
  /** Invocations that ran out of time. */
  timeouts: number;
  largestBatch: number;
  /** The longest an invocation took, ms (those that ran out of time included). */
  longestInvocationMs: number;
}

export interface SqsEventSource {
  readonly stats: SqsEventSourceStats;
  /** The errors handlers threw, for the test to show. */
  readonly errors: unknown[];
  stop(): Promise<void>;
}

/**
 * A small Lambda SQS event source for the serverless simulation: lanes long-poll the queue, hand
 * each batch to a handler as a real SQS event, then delete what succeeded and make visible again
 * what the handler reported failed (all of it when it threw), as Lambda does with
 * `reportBatchItemFailures`.
 */
export function startSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const stats: SqsEventSourceStats = {
    invocations: 0,
    messages: 0,
    duplicated: 0,
    failed: 0,
    errors: 0,
    timeouts: 0,
    largestBatch: 0,
    longestInvocationMs: 0,
  };
  const errors: unknown[] = [];
  const abort = new AbortController();
  const duplicatedIds = new Set<string>();

  const settle = async (messages: readonly Message[], failedIds: ReadonlySet<string>): Promise<void> => {
    const deletions: { Id: string; ReceiptHandle: string }[] = [];
    const comeBack: { handle: string; after: number }[] = [];
    for (const message of messages) {
      const id = message.MessageId ?? '';
      const handle = message.ReceiptHandle ?? '';
      if (failedIds.has(id)) {
        comeBack.push({ handle, after: options.retryAfterSeconds ?? 0 });
      } else if (
        !duplicatedIds.has(id) &&
        options.duplicate?.(sqsRecordFromMessage(message, options.queueArn))
      ) {
        duplicatedIds.add(id);
        stats.duplicated++;
        comeBack.push({ handle, after: 0 });
      } else {
        deletions.push({ Id: `d${deletions.length}`, ReceiptHandle: handle });
      }
    }
    await Promise.all(
      comeBack.map(({ handle, after }) =>
        options.client
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: options.queueUrl,
              ReceiptHandle: handle,
              VisibilityTimeout: after,
            }),
          )
          // Its visibility timeout ran out meanwhile: it is visible again, which is what was wanted.
          .catch((error: unknown) => {
            if ((error as Error).name !== 'MessageNotInflight') throw error;
          }),
      ),
    );
    if (deletions.length > 0) {
      await options.client.send(
        new DeleteMessageBatchCommand({ QueueUrl: options.queueUrl, Entries: deletions }),
      );
    }
  };

  const fillBatch = async (first: Message[]): Promise<Message[]> => {
    const batchSize = options.batchSize ?? 10;
    const until = Date.now() + (options.maxBatchingWindowMs ?? 0);
    const messages = [...first];
    while (messages.length < batchSize && Date.now() < until && !abort.signal.aborted) {
      const result = await options.client
        .send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: batchSize - messages.length,
            WaitTimeSeconds: 0,
            VisibilityTimeout: options.visibilityTimeoutSeconds ?? 30,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        )
        .catch((error: unknown) => {
          errors.push(error);
          return { Messages: [] };
        });
      if (result.Messages?.length) messages.push(...result.Messages);
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return messages;
  };

  const lane = async (first: SqsBatchHandler): Promise<void> => {
    let handler = first;
    while (!abort.signal.aborted) {
      let messages: Message[];
      try {
        const result = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: options.waitTimeSeconds ?? 1,
            VisibilityTimeout: options.visibilityTimeoutSeconds ?? 30,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        messages = result.Messages ?? [];
      } catch (error) {
        if (abort.signal.aborted) return;
        errors.push(error);
        continue;
      }
      if (messages.length === 0) continue;
      messages = await fillBatch(messages);
      const records = messages.map((message) => sqsRecordFromMessage(message, options.queueArn));
      const ids = new Set(records.map((record) => record.messageId));
      stats.invocations++;
      stats.messages += records.length;
      stats.largestBatch = Math.max(stats.largestBatch, records.length);
      let failedIds: Set<string>;
      const timeoutMs = options.functionTimeoutMs ?? 60_000;
      const started = Date.now();
      try {
        const invocation = handler({ Records: records }, aLambdaContext(timeoutMs));
        const response = await outOfTime(invocation, timeoutMs);
        stats.longestInvocationMs = Math.max(stats.longestInvocationMs, Date.now() - started);
        if (response === OUT_OF_TIME) {
          stats.timeouts++;
          stats.failed += ids.size;
          // The dead container's invocation is let go of; its messages come back, to a new container.
          if (options.newHandler) handler = await options.newHandler();
          else
            errors.push(
              new Error(`an invocation of ${records.length} messages ran out of its ${timeoutMs} ms`),
            );
          await settle(messages, ids).catch((error: unknown) => errors.push(error));
          continue;
        }
        failedIds = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        // Lambda fails the whole batch when a reported id is not one of its messages.
        if ([...failedIds].some((id) => !ids.has(id))) failedIds = ids;
      } catch (error) {
        stats.errors++;
        errors.push(error);
        failedIds = ids;
      }
      stats.failed += failedIds.size;
      try {
        await settle(messages, failedIds);
      } catch (error) {
        errors.push(error);
      }
    }
  };

  const lanes = options.handlers.map((handler) => lane(handler));
  return {
    stats,
    errors,
    async stop() {
      abort.abort();
      await Promise.all(lanes);
    },
  };
}

const OUT_OF_TIME = Symbol('out of time');

/** The invocation's answer, or `OUT_OF_TIME` when it has none within `ms`. */
async function outOfTime<T>(invocation: Promise<T>, ms: number): Promise<T | typeof OUT_OF_TIME> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof OUT_OF_TIME>((resolve) => {
    timer = setTimeout(() => resolve(OUT_OF_TIME), ms);
  });
  try {
    return await Promise.race([invocation, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
