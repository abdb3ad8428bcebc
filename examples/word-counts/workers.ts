import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createWorker,
  type Worker,
  WorkerError,
  type WorkerTransport,
} from '../../functions/worker/index.js';
import { bookTitle, countWords, sectionId, splitChapters } from './book.js';

export const DEFAULT_BOOK = join(dirname(fileURLToPath(import.meta.url)), 'Alice_in_Wonderland.txt');

export interface WordCountWorkersOptions {
  /** Where workers exchange data (the original's "key-value store"): sections and counts files. */
  dataDir?: string;
  /** A transport per worker (the in-memory bus); default RabbitMQ at `amqpUrl`. */
  transport?: () => WorkerTransport;
  amqpUrl?: string;
  /** Sections counted at once. @default 4 */
  concurrency?: number;
}

type Section = {
  id: string;
  title: string;
};

const quiet = { info() {}, warn: console.warn, error: console.error };

/**
 * The example's four workers. They share files in `dataDir` rather than passing book text through
 * the queues: messages carry references, as the original example did with its key-value store.
 */
export async function startWordCountWorkers(options: WordCountWorkersOptions = {}): Promise<Worker[]> {
  const dataDir = options.dataDir ?? join(tmpdir(), 'switchyard-word-counts');
  const base = { amqpUrl: options.amqpUrl, logger: quiet };
  const withTransport = () => (options.transport ? { transport: options.transport() } : {});
  const jobDir = (jobId: string) => join(dataDir, jobId);

  const workers = [
    createWorker({
      ...base,
      ...withTransport(),
      queue: 'book-split',
      handler: async (input, { jobId }) => {
        const book = typeof input.book === 'string' ? input.book : DEFAULT_BOOK;
        const text = await readFile(book, 'utf8').catch(() => {
          throw new WorkerError(`cannot read the book ${book}`);
        });
        const chapters = splitChapters(text);
        if (!chapters.length) {
          // Reading it again will not add headings: fail the step now, whatever its retries.
          throw new WorkerError(`${book} has no "CHAPTER" headings to split on`, { retryable: false });
        }
        const sections: Section[] = [];
        await mkdir(join(jobDir(jobId), 'sections'), { recursive: true });
        for (const [index, chapter] of chapters.entries()) {
          const id = sectionId(jobId, index);
          await writeFile(join(jobDir(jobId), 'sections', `${id}.txt`), chapter.text);
          sections.push({ id, title: chapter.title });
        }
        return { book, dataDir: jobDir(jobId), sections };
      },
    }),
    createWorker({
      ...base,
      ...withTransport(),
      queue: 'segment-word-counts',
      concurrency: options.concurrency ?? 4,
      handler: async (input) => {
        const section = input.section as unknown as Section;
        const dir = input.dataDir as string;
        const counts = countWords(await readFile(join(dir, 'sections', `${section.id}.txt`), 'utf8'));
        await mkdir(join(dir, 'counts'), { recursive: true });
        await writeFile(
          join(dir, 'counts', `${section.id}.json`),
          JSON.stringify(Object.fromEntries(counts)),
        );
        const tokens = [...counts.values()].reduce((sum, n) => sum + n, 0);
        // Echo the input, as the original's workers do, so the fan-in carries dataDir on to sum-splits.
        return { ...input, section: { ...section, tokens, distinct: counts.size } };
      },
    }),
    createWorker({
      ...base,
      ...withTransport(),
      queue: 'sum-splits',
      handler: async (input) => {
        const dir = input.dataDir as string;
        const sections = input.sections as unknown as Section[];
        const totals = new Map<string, number>();
        for (const section of sections) {
          const counts = JSON.parse(
            await readFile(join(dir, 'counts', `${section.id}.json`), 'utf8'),
          ) as Record<string, number>;
          for (const [word, count] of Object.entries(counts))
            totals.set(word, (totals.get(word) ?? 0) + count);
        }
        const countsFile = join(dir, 'word-counts.json');
        const sorted = [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
        await writeFile(countsFile, JSON.stringify(Object.fromEntries(sorted), null, 1));
        return {
          chapters: sections.length,
          tokens: sorted.reduce((sum, [, n]) => sum + n, 0),
          distinct: sorted.length,
          countsFile,
          top: sorted.slice(0, 10).map(([word, count]) => ({ word, count })),
        };
      },
    }),
    createWorker({
      ...base,
      ...withTransport(),
      queue: 'store-title',
      handler: async (input) => {
        const book = typeof input.book === 'string' ? input.book : DEFAULT_BOOK;
        return { title: bookTitle(await readFile(book, 'utf8')) };
      },
    }),
  ];
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
