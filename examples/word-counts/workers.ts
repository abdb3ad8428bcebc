import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorker, type Worker, type WorkerTransport } from '../../functions/worker/index.js';
import { filesIn, WORD_COUNT_QUEUES, wordCountHandlers } from './handlers.js';

export { DEFAULT_BOOK } from './handlers.js';

export interface WordCountWorkersOptions {
  /** Where workers exchange data (the original's "key-value store"): sections and counts files. */
  dataDir?: string;
  /** A transport per worker (the in-memory bus); default RabbitMQ at `amqpUrl`. */
  transport?: () => WorkerTransport;
  amqpUrl?: string;
  /** Put before each queue's name, as `serve --queue-prefix` puts it before the workflow's. */
  queuePrefix?: string;
  /** Sections counted at once. @default 4 */
  concurrency?: number;
}

const quiet = { info() {}, warn: console.warn, error: console.error };

/**
 * The example's four workers. They share files in `dataDir` rather than passing book text through
 * the queues: messages carry references, as the original example did with its key-value store.
 * (`lambda-workers.ts` runs the same handlers as Lambda functions, the data in the messages.)
 */
export async function startWordCountWorkers(options: WordCountWorkersOptions = {}): Promise<Worker[]> {
  const handlers = wordCountHandlers(filesIn(options.dataDir ?? join(tmpdir(), 'switchyard-word-counts')));
  const workers = WORD_COUNT_QUEUES.map((queue) =>
    createWorker({
      amqpUrl: options.amqpUrl,
      logger: quiet,
      ...(options.transport ? { transport: options.transport() } : {}),
      queue: `${options.queuePrefix ?? ''}${queue}`,
      handler: handlers[queue],
      ...(queue === 'segment-word-counts' ? { concurrency: options.concurrency ?? 4 } : {}),
    }),
  );
  await Promise.all(workers.map((worker) => worker.start()));
  return workers;
}

// `npm run workers` (node --import tsx examples/word-counts/workers.ts): the four workers on the
// RabbitMQ at AMQP_URL (default amqp://guest:guest@127.0.0.1:5672) until Ctrl-C or SIGTERM.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const workers = await startWordCountWorkers({ amqpUrl: process.env.AMQP_URL });
  console.log(
    `word-count workers running on book-split, segment-word-counts, sum-splits and store-title (${workers.length} queues); Ctrl-C stops them`,
  );
  const stop = () => void Promise.all(workers.map((w) => w.stop())).then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
