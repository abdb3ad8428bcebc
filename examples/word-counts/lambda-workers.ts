import {
  type LambdaWorkerOptions,
  lambdaWorker,
  type SqsWorkerFunction,
} from '../../functions/worker/lambda/index.js';
import { inTheMessages, WORD_COUNT_QUEUES, type WordCountQueue, wordCountHandlers } from './handlers.js';

/**
 * The example's four workers as Lambda functions (`cdk deploy -c workers=lambda`): the handlers of
 * `workers.ts`, each wrapped by `lambdaWorker`. Lambda functions share no disk, so the sections and
 * their counts travel in the messages (`inTheMessages`) rather than in files.
 */
export function wordCountLambdaWorkers(
  options: LambdaWorkerOptions = {},
): Record<WordCountQueue, SqsWorkerFunction> {
  const handlers = wordCountHandlers(inTheMessages);
  return Object.fromEntries(
    WORD_COUNT_QUEUES.map((queue) => [queue, lambdaWorker(handlers[queue], options)]),
  ) as Record<WordCountQueue, SqsWorkerFunction>;
}

const workers = wordCountLambdaWorkers();

// One export per step queue, named after it in camelCase: WorkerFunction's `handler` for the queue.
export const bookSplit = workers['book-split'];
export const segmentWordCounts = workers['segment-word-counts'];
export const sumSplits = workers['sum-splits'];
export const storeTitle = workers['store-title'];
