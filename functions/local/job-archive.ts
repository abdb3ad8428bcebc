import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

/** The archive's files, oldest first, with what each holds. */
export async function listArchive(dir: string): Promise<ArchiveFile[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => FILE.test(name)).sort();
  const files: ArchiveFile[] = [];
  for (const name of names) {
    let jobs = 0;
    let lines = 0;
    for (const line of await linesOf(join(dir, name))) {
      lines++;
      if (line.job.parent === null) jobs++;
    }
    files.push({ name, day: FILE.exec(name)?.[1] as string, jobs, lines });
  }
  return files;
}

/** A job from the archive, with its children: its latest archived copy (a job retried and archived again has several). */
export async function findArchived(
  dir: string,
  id: string,
): Promise<{ job: JobJson; children: JobJson[]; file: string } | undefined> {
  const wanted = id.toLowerCase();
  let found: { job: JobJson; children: JobJson[]; file: string } | undefined;
  for (const { name } of await listArchive(dir)) {
    for (const line of await linesOf(join(dir, name))) {
      if (line.job.id === wanted) found = { job: line.job, children: [], file: name };
      else if (found && line.job.parent?.id === wanted) found.children.push(line.job);
    }
  }
  return found;
}

async function linesOf(path: string): Promise<ArchiveLine[]> {
  const text = await readFile(path, 'utf8');
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
