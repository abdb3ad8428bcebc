import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  FINISHED_JOB_STATUSES,
  type JobJson,
  type JobQueries,
  type JobRecord,
  type ListedStatus,
} from '../../engine/index.js';

/** One line of an archive file: a job as stored (its children each a line of their own after it). */
export interface ArchiveLine {
  archivedAt: string;
  /** As the stores keep it: the record with its steps as an array. */
  job: JobJson;
  /**
   * The deployed archive could read only the head's plain attributes (id, workflow, status, times):
   * its JSON was in chunk items that DynamoDB's TTL deleted in another batch.
   */
  partial?: true;
}

/** Archive files: one per day of archiving, `jobs-YYYY-MM-DD.jsonl`, appended to. */
const FILE = /^jobs-(\d{4}-\d{2}-\d{2})\.jsonl$/;
const PAGE = 1_000;

/**
 * Writes every finished top-level job that ended before `endedBefore`, and its fan-out children, to
 * today's JSON Lines file under `dir`, and makes the file durable (fsync) before it returns: the
 * retention sweep deletes only what this wrote. Returns the jobs written (children included).
 */
export async function archiveFinishedJobs(
  store: Pick<JobQueries, 'queryJobs' | 'listChildren'>,
  dir: string,
  endedBefore: number,
  now = Date.now(),
): Promise<number> {
  await mkdir(dir, { recursive: true });
  const file = await open(join(dir, `jobs-${new Date(now).toISOString().slice(0, 10)}.jsonl`), 'a');
  const archivedAt = new Date(now).toISOString();
  let written = 0;
  try {
    for (const status of FINISHED_JOB_STATUSES as ListedStatus[]) {
      let cursor: string | undefined;
      do {
        const page = await store.queryJobs({ status, endedBefore, limit: PAGE, cursor });
        for (const job of page.jobs) {
          const lines = [JSON.stringify({ archivedAt, job })];
          for (const child of await childrenOf(store, job))
            lines.push(JSON.stringify({ archivedAt, job: child }));
          await file.write(`${lines.join('\n')}\n`);
          written += lines.length;
        }
        cursor = page.cursor;
      } while (cursor);
    }
    await file.sync();
  } finally {
    await file.close();
  }
  return written;
}

async function childrenOf(store: Pick<JobQueries, 'listChildren'>, job: JobRecord): Promise<JobRecord[]> {
  const children: JobRecord[] = [];
  for (const state of job.steps) {
    if (!state.children) continue;
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await store.listChildren(job.id, state.name, { fromIndex, limit: PAGE });
      children.push(...page.children);
      fromIndex = page.nextIndex;
    }
  }
  return children;
}

export interface ArchiveFile {
  name: string;
  day: string;
  /** Top-level jobs, and all jobs (children included). */
  jobs: number;
  lines: number;
}

/**
 * Where archived jobs are read from: serve's directory, one downloaded file, or the deployed stack's
 * S3 bucket (functions/adapters/s3/archive-bucket.ts). Each holds JSON Lines of `ArchiveLine`.
 */
export interface ArchiveSource {
  /** A description for messages (the directory, the file, the bucket's URL). */
  readonly where: string;
  /** The archive's files (or objects), oldest first, with the day each was written. */
  files(): Promise<{ name: string; day: string }[]>;
  text(name: string): Promise<string>;
}

/** serve's archive directory: `jobs-YYYY-MM-DD.jsonl` files. */
export function directorySource(dir: string): ArchiveSource {
  return {
    where: dir,
    files: async () =>
      (await readdir(dir).catch(() => [] as string[]))
        .filter((name) => FILE.test(name))
        .sort()
        .map((name) => ({ name, day: FILE.exec(name)?.[1] as string })),
    text: (name) => readFile(join(dir, name), 'utf8'),
  };
}

/** One archive file, wherever it came from (an object downloaded from the stack's bucket). */
export function fileSource(path: string): ArchiveSource {
  return {
    where: path,
    files: async () => [{ name: path, day: /(\d{4}-\d{2}-\d{2})/.exec(basename(path))?.[1] ?? '' }],
    text: (name) => readFile(name, 'utf8'),
  };
}

/** The archive's files, oldest first, with what each holds. */
export async function listArchive(source: ArchiveSource | string): Promise<ArchiveFile[]> {
  const from = typeof source === 'string' ? directorySource(source) : source;
  const files: ArchiveFile[] = [];
  for (const { name, day } of await from.files()) {
    let jobs = 0;
    let lines = 0;
    for (const line of linesOf(await from.text(name))) {
      lines++;
      if (line.job.parent === null) jobs++;
    }
    files.push({ name, day, jobs, lines });
  }
  return files;
}

/**
 * A job from the archive, with its children: its latest archived copy (a job retried and archived
 * again has several), and the latest copy of each of its children, wherever they are (serve writes
 * them after their job; the deployed archive in whatever order DynamoDB's TTL deleted them).
 */
export async function findArchived(
  source: ArchiveSource | string,
  id: string,
): Promise<{ job: JobJson; children: JobJson[]; file: string } | undefined> {
  const from = typeof source === 'string' ? directorySource(source) : source;
  const wanted = id.toLowerCase();
  let found: { job: JobJson; file: string } | undefined;
  const children = new Map<string, JobJson>();
  for (const { name } of await from.files()) {
    for (const line of linesOf(await from.text(name))) {
      if (line.job.id === wanted) found = { job: line.job, file: name };
      else if (line.job.parent?.id === wanted) children.set(line.job.id, line.job);
    }
  }
  if (!found) return undefined;
  const ordered = [...children.values()].sort((a, b) => (a.parent?.index ?? 0) - (b.parent?.index ?? 0));
  return { ...found, children: ordered };
}

function linesOf(text: string): ArchiveLine[] {
  const lines: ArchiveLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      lines.push(JSON.parse(line) as ArchiveLine);
    } catch {
      // A line cut by a crash while it was written: the job is still in the store, archived again next sweep.
    }
  }
  return lines;
}
