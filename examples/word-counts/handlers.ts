import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Json, type JsonObject, WorkerError, type WorkerHandler } from '../../functions/worker/index.js';
import { bookTitle, countWords, sectionId, splitChapters } from './book.js';

/** Beside this file in the repository, and beside the bundle of a Lambda worker (WorkerFunction's `files`). */
export const DEFAULT_BOOK = join(dirname(fileURLToPath(import.meta.url)), 'Alice_in_Wonderland.txt');

/** The example's step queues, each with its handler. */
export const WORD_COUNT_QUEUES = ['book-split', 'segment-word-counts', 'sum-splits', 'store-title'] as const;
export type WordCountQueue = (typeof WORD_COUNT_QUEUES)[number];

type Chapter = { title: string; text: string };

/**
 * Where the workers keep a job's sections and counts between its steps. The original example used a
 * key-value store; `filesIn(dataDir)` is a directory every worker can read (one machine), and
 * `inTheMessages` carries them in the requests and replies, for workers that share no disk (Lambda).
 */
export interface WordCountData {
  /** Keeps the chapters: the sections to fan out over, and what else book-split's output carries. */
  putSections(jobId: string, chapters: Chapter[]): Promise<{ sections: JsonObject[]; carry: JsonObject }>;
  /** The text of the section a segment-word-counts request is about. */
  sectionText(input: JsonObject, section: JsonObject): Promise<string>;
  /** Keeps a section's counts: what its result carries besides the totals. */
  putCounts(input: JsonObject, section: JsonObject, counts: Map<string, number>): Promise<JsonObject>;
  /** The counts of one counted section, in sum-splits. */
  countsOf(input: JsonObject, section: JsonObject): Promise<Record<string, number>>;
  /** Keeps the book's totals: what the result says of where they are. */
  putTotals(input: JsonObject, sorted: [string, number][]): Promise<JsonObject>;
}

/** The files of each job under `dataDir/<job id>`, as the original's workers shared them. */
export function filesIn(dataDir: string): WordCountData {
  const directoryOf = (input: JsonObject): string => {
    if (typeof input.dataDir !== 'string')
      throw new WorkerError('no dataDir in the input', { retryable: false });
    return input.dataDir;
  };
  return {
    async putSections(jobId, chapters) {
      const jobDir = join(dataDir, jobId);
      await mkdir(join(jobDir, 'sections'), { recursive: true });
      const sections: JsonObject[] = [];
      for (const [index, chapter] of chapters.entries()) {
        const id = sectionId(jobId, index);
        await writeFile(join(jobDir, 'sections', `${id}.txt`), chapter.text);
        sections.push({ id, title: chapter.title });
      }
      return { sections, carry: { dataDir: jobDir } };
    },
    sectionText: (input, section) =>
      readFile(join(directoryOf(input), 'sections', `${section.id}.txt`), 'utf8'),
    async putCounts(input, section, counts) {
      const dir = directoryOf(input);
      await mkdir(join(dir, 'counts'), { recursive: true });
      await writeFile(join(dir, 'counts', `${section.id}.json`), JSON.stringify(Object.fromEntries(counts)));
      return {};
    },
    async countsOf(input, section) {
      const text = await readFile(join(directoryOf(input), 'counts', `${section.id}.json`), 'utf8');
      return JSON.parse(text) as Record<string, number>;
    },
    async putTotals(input, sorted) {
      const countsFile = join(directoryOf(input), 'word-counts.json');
      await writeFile(countsFile, JSON.stringify(Object.fromEntries(sorted), null, 1));
      return { countsFile };
    },
  };
}

/**
 * The sections' text and counts in the messages themselves (a section's text in its request, its
 * counts in its reply), for workers with no disk in common. Alice's largest message is then the
 * sum-splits request, about 0.3 MB, under SQS's 1 MiB; a longer book wants a shared store instead.
 */
export const inTheMessages: WordCountData = {
  async putSections(jobId, chapters) {
    const sections = chapters.map((chapter, index) => ({
      id: sectionId(jobId, index),
      title: chapter.title,
      text: chapter.text,
    }));
    return { sections, carry: {} };
  },
  async sectionText(_input, section) {
    if (typeof section.text !== 'string')
      throw new WorkerError('the section has no text', { retryable: false });
    return section.text;
  },
  async putCounts(_input, _section, counts) {
    return { counts: Object.fromEntries(counts) };
  },
  async countsOf(_input, section) {
    const counts = section.counts;
    if (!counts || typeof counts !== 'object' || Array.isArray(counts)) {
      throw new WorkerError(`section ${section.id} has no counts`, { retryable: false });
    }
    return counts as Record<string, number>;
  },
  async putTotals() {
    return {};
  },
};

/** A section object (an element of `sections`, or a request's `section`): what the workflow promises. */
function asSection(value: Json | undefined, what: string): JsonObject {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new WorkerError(`${what} is not a section object`, { retryable: false });
  }
  return value;
}

async function readBook(input: JsonObject): Promise<{ book: string; text: string }> {
  const book = typeof input.book === 'string' ? input.book : DEFAULT_BOOK;
  const text = await readFile(book, 'utf8').catch(() => {
    throw new WorkerError(`cannot read the book ${book}`);
  });
  return { book, text };
}

/**
 * The example's four handlers, whatever runs them (`createWorker` processes, Lambda functions),
 * keeping the data in `data`.
 */
export function wordCountHandlers(data: WordCountData): Record<WordCountQueue, WorkerHandler> {
  return {
    'book-split': async (input, { jobId }) => {
      const { book, text } = await readBook(input);
      const chapters = splitChapters(text);
      if (!chapters.length) {
        // Reading it again will not add headings: fail the step now, whatever its retries.
        throw new WorkerError(`${book} has no "CHAPTER" headings to split on`, { retryable: false });
      }
      const { sections, carry } = await data.putSections(jobId, chapters);
      return { book, ...carry, sections };
    },
    'segment-word-counts': async (input) => {
      const request = asSection(input.section, "the input's section");
      const { text: _text, ...section } = request;
      const counts = countWords(await data.sectionText(input, request));
      const kept = await data.putCounts(input, section, counts);
      const tokens = [...counts.values()].reduce((sum, n) => sum + n, 0);
      // Echo the input, as the original's workers do, so the fan-in carries dataDir on to sum-splits.
      return { ...input, section: { ...section, tokens, distinct: counts.size, ...kept } };
    },
    'sum-splits': async (input) => {
      if (!Array.isArray(input.sections))
        throw new WorkerError('no sections in the input', { retryable: false });
      const totals = new Map<string, number>();
      for (const [index, entry] of input.sections.entries()) {
        const counts = await data.countsOf(input, asSection(entry, `sections[${index}]`));
        for (const [word, count] of Object.entries(counts)) totals.set(word, (totals.get(word) ?? 0) + count);
      }
      const sorted = [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const where = await data.putTotals(input, sorted);
      return {
        chapters: input.sections.length,
        tokens: sorted.reduce((sum, [, n]) => sum + n, 0),
        distinct: sorted.length,
        ...where,
        top: sorted.slice(0, 10).map(([word, count]) => ({ word, count })),
      };
    },
    'store-title': async (input) => {
      const { text } = await readBook(input);
      return { title: bookTitle(text) };
    },
  };
}
