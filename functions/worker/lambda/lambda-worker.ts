import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { JsonObject } from '../../../engine/index.js';
import { TOKEN_ATTRIBUTE } from '../../transport/request-token.js';
import { defaultWorkerName } from '../../transport/worker-name.js';
import type { ReplyOptions } from '../../transport/worker-transport.js';
import { HeldRequest, settlesWithin } from '../in-hand.js';
import { type HandleRequest, requestHandling } from '../request-handling.js';
import { sendSqsReply, sqsRequestOf } from '../transports/sqs-messages.js';
import {
  consoleLogger,
  messageOf,
  type WorkerHandler,
  type WorkerLogger,
  type WorkerResult,
} from '../worker-types.js';
import { keepHiddenWhileHandled } from './hidden-while-handled.js';

export interface LambdaWorkerOptions {
  /** @default a new SQSClient with the function's region and role */
  client?: SQSClient;
  logger?: WorkerLogger;
  /** Deliveries (`ApproximateReceiveCount`) of a request whose handler throws before it is answered with an error reply. @default 5 */
  maxDeliveries?: number;
  /** How long a handler runs before its message's visibility is extended to the invocation's deadline. @default 60000 */
  heartbeatIntervalMs?: number;
  /** How long a request handed back (its handler threw) stays hidden before it is delivered again. @default 0 */
  rejectVisibilityTimeoutSeconds?: number;
  /** How the function names itself on its replies (`x-worker`). @default the function's name and the SDK's `<host>:<pid>` */
  workerName?: string;
}

/** The function Lambda's SQS event source invokes (with `reportBatchItemFailures`). */
export type SqsWorkerFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** The part of the invocation's time kept to answer a handler that has not finished: a fifth, at most this. */
const DEADLINE_RESERVE_MS = 2_000;

/**
 * An SQS-triggered Lambda function as a worker for its step queue: the handler, its `WorkerError`,
 * `abort()`/`suspend()` and the replies are those of `createWorker` (protocol.md, "The worker SDK").
 * The messages of a batch are handled at once; the answer is a partial batch response, so Lambda
 * deletes the answered requests and delivers the others again:
 *
 * - a result, an error reply or a control reply sent: the request is done (deleted);
 * - a handler that throws (not a `WorkerError`): the request comes back, at once unless
 *   `rejectVisibilityTimeoutSeconds`, until its `maxDeliveries`-th delivery, which is answered with an
 *   error reply; a reply that cannot be sent: it comes back too;
 * - a message without `correlation_id` or `reply_to`: reported failed and left to the queue's
 *   receive limit, which moves it to the step dead-letter queue (as `SqsWorkerTransport` does);
 * - a handler still running when the invocation is about to time out (a fifth of its time left, at
 *   most 2 s): the attempt is answered with a retryable error reply saying so, and the late result is
 *   dropped. Another delivery would meet the same limit; the step's `retries` decide.
 *
 * A handler running longer than `heartbeatIntervalMs` gets its message hidden until the invocation's
 * deadline (`context.heartbeat()` does so too, besides telling the manager). A step takes at most the
 * function's timeout: 15 minutes on Lambda.
 *
 * @example
 * ```ts
 * // count-words.ts, bundled as a Lambda function triggered by the step queue <prefix>count-words
 * import { WorkerError } from 'switchyard-worker';
 * import { lambdaWorker } from 'switchyard-worker/lambda';
 *
 * export const handler = lambdaWorker<{ text: string }, { words: number }>(({ text }) => {
 *   if (typeof text !== 'string') throw new WorkerError('no text', { retryable: false });
 *   return { words: text.split(/\s+/).filter(Boolean).length };
 * });
 * ```
 */
export function lambdaWorker(handler: WorkerHandler, options?: LambdaWorkerOptions): SqsWorkerFunction;
export function lambdaWorker<In extends JsonObject, Out extends WorkerResult = WorkerResult>(
  handler: WorkerHandler<In, Out>,
  options?: LambdaWorkerOptions,
): SqsWorkerFunction;
export function lambdaWorker<In extends JsonObject, Out extends WorkerResult>(
  handler: WorkerHandler<In, Out>,
  options: LambdaWorkerOptions = {},
): SqsWorkerFunction {
  const maxDeliveries = options.maxDeliveries ?? 5;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 60_000;
  const rejectVisibility = options.rejectVisibilityTimeoutSeconds ?? 0;
  const workerName =
    options.workerName ??
    (process.env.AWS_LAMBDA_FUNCTION_NAME
      ? `${process.env.AWS_LAMBDA_FUNCTION_NAME}:${defaultWorkerName()}`
      : defaultWorkerName());
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
    throw new Error(`maxDeliveries must be a whole number of at least 1, not ${maxDeliveries}`);
  }
  if (!Number.isFinite(heartbeatIntervalMs) || heartbeatIntervalMs <= 0) {
    throw new Error(
      `heartbeatIntervalMs must be a positive number of milliseconds, not ${heartbeatIntervalMs}`,
    );
  }
  if (!Number.isInteger(rejectVisibility) || rejectVisibility < 0 || rejectVisibility > 43_200) {
    throw new Error(
      `rejectVisibilityTimeoutSeconds must be whole seconds from 0 to 43200, not ${rejectVisibility}`,
    );
  }
  const logger = options.logger ?? consoleLogger;
  let client = options.client;
  const sqs = (): SQSClient => {
    client ??= new SQSClient({});
    return client;
  };
  const queueUrls = new Map<string, Promise<string>>();
  const queueUrlOf = (queueName: string): Promise<string> => {
    let url = queueUrls.get(queueName);
    if (!url) {
      url = (async () => {
        const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: queueName }));
        if (!QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${queueName}`);
        return QueueUrl;
      })();
      // Looked up again next time, should this lookup fail.
      url.catch(() => queueUrls.delete(queueName));
      queueUrls.set(queueName, url);
    }
    return url;
  };
  const changeVisibility = async (queueName: string, record: SQSRecord, seconds: number): Promise<void> => {
    const command = new ChangeMessageVisibilityCommand({
      QueueUrl: await queueUrlOf(queueName),
      ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: seconds,
    });
    try {
      await sqs().send(command);
    } catch (error) {
      // Already visible again (its visibility timeout ran out): nothing left to change.
      if ((error as Error).name !== 'MessageNotInflight') throw error;
    }
  };
  const send = (replyTo: string, correlationId: string, body: string, says: ReplyOptions): Promise<void> =>
    sendSqsReply(sqs(), replyTo, correlationId, body, says);

  /** One request handling per queue (a function may be triggered by several), made on its first message. */
  const handlings = new Map<
    string,
    { handle: HandleRequest; heartbeats: WeakMap<object, () => Promise<void>> }
  >();
  const handlingOf = (queueName: string) => {
    let handling = handlings.get(queueName);
    if (!handling) {
      const heartbeats = new WeakMap<object, () => Promise<void>>();
      const handle = requestHandling({
        queue: queueName,
        handler,
        maxDeliveries,
        logger,
        worker: workerName,
        send,
        onHeartbeat: async (delivery) => heartbeats.get(delivery)?.(),
      });
      handling = { handle, heartbeats };
      handlings.set(queueName, handling);
    }
    return handling;
  };

  async function handleRecord(record: SQSRecord, deadline: number, reserveMs: number): Promise<void> {
    const queueName = queueNameOf(record.eventSourceARN);
    const attribute = (name: string): string | undefined => record.messageAttributes?.[name]?.stringValue;
    const request = sqsRequestOf(
      {
        messageId: record.messageId,
        correlationId: attribute('correlation_id'),
        replyTo: attribute('reply_to'),
        attempt: attribute('attempt'),
        token: attribute(TOKEN_ATTRIBUTE),
        receiveCount: record.attributes?.ApproximateReceiveCount,
        body: record.body,
      },
      queueName,
    );
    if (request instanceof Error) {
      logger.error(`${queueName}: ${request.message}`);
      throw request;
    }
    let outcome: 'answered' | 'handed back' | undefined;
    let timedOut = false;
    const held = new HeldRequest({
      ...request,
      ack: async () => {
        outcome = 'answered';
      },
      reject: async () => {
        // Given up on at the deadline: answered with an error reply, not delivered again.
        if (timedOut) return;
        outcome = 'handed back';
        await changeVisibility(queueName, record, rejectVisibility);
      },
    });
    const { handle, heartbeats } = handlingOf(queueName);
    const hidden = keepHiddenWhileHandled({
      deadline,
      everyMs: heartbeatIntervalMs,
      changeVisibility: (seconds) => changeVisibility(queueName, record, seconds),
      onError: (error) =>
        logger.warn(`${queueName}: could not extend the visibility of ${request.correlationId}`, {
          error: messageOf(error),
        }),
    });
    heartbeats.set(held, hidden.extend);
    try {
      const finished = await settlesWithin(
        handle(held).catch((error: unknown) => {
          logger.error(`${queueName}: handling ${request.correlationId} failed`, { error: messageOf(error) });
        }),
        deadline - reserveMs - Date.now(),
      );
      if (!finished) {
        timedOut = true;
        // Handed back first: a result that arrives while the error reply is sent is dropped.
        await held.handBack();
        outcome = (await answerTimedOut(held, queueName, deadline)) ? 'answered' : 'handed back';
      }
    } finally {
      hidden.stop();
    }
    if (outcome !== 'answered')
      throw new Error(`${request.correlationId} is handed back for another delivery`);
  }

  /** A handler the invocation cannot wait for: the attempt fails now. Whether the error reply was sent. */
  async function answerTimedOut(held: HeldRequest, queueName: string, deadline: number): Promise<boolean> {
    const message =
      `the handler did not finish before the Lambda function's timeout (${Math.max(0, deadline - Date.now())} ms ` +
      'were left): raise the function timeout (15 minutes at most) or split the step';
    logger.warn(`${queueName}: ${held.correlationId} failed: ${message}`);
    try {
      await send(held.replyTo, held.correlationId, JSON.stringify({ error: message }), {
        type: 'error',
        ...(held.attempt !== undefined ? { attempt: held.attempt } : {}),
        ...(held.token !== undefined ? { token: held.token } : {}),
      });
      return true;
    } catch (error) {
      logger.error(`${queueName}: could not send the timeout error for ${held.correlationId}`, {
        error: messageOf(error),
      });
      return false;
    }
  }

  return async (event, context) => {
    const remainingMs = context.getRemainingTimeInMillis();
    const deadline = Date.now() + remainingMs;
    const reserveMs = Math.min(DEADLINE_RESERVE_MS, remainingMs / 5);
    return processPartialResponse(
      event,
      (record: SQSRecord) => handleRecord(record, deadline, reserveMs),
      new BatchProcessor(EventType.SQS),
      // A batch whose every message failed is reported, not thrown: the same partial response.
      { throwOnFullBatchFailure: false },
    );
  };
}

/** `arn:aws:sqs:<region>:<account>:<name>` → `<name>`. */
function queueNameOf(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}
