import { findArchived, listArchive } from '../../local/job-archive.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;

/** Where serve archives and `switchyard archive` reads by default (beside where serve runs). */
export const DEFAULT_ARCHIVE_DIR = 'switchyard-archive';

/** `switchyard archive list`: each file, its day, its jobs (top-level) and lines (children too). */
export async function listArchiveFiles(options: { dir: string; output?: string }, out: Out): Promise<void> {
  const files = await listArchive(options.dir);
  if (outputFormat(options.output) === 'json') {
    out(JSON.stringify(files, null, 2));
    return;
  }
  if (!files.length) {
    out(`no archive in ${options.dir}: serve --retain writes one (--archive-dir names where)`);
    return;
  }
  const p = paint(colourFor(process.stdout));
  out(
    renderTable(
      ['FILE', 'DAY', 'JOBS', 'WITH CHILDREN'],
      files.map((file) => [file.name, file.day, String(file.jobs), String(file.lines)]),
      p,
    ),
  );
}

/** `switchyard archive show ID`: the job as archived, as JSON; exit 1 when the archive lacks it. */
export async function showArchivedJob(id: string, options: { dir: string }, out: Out): Promise<number> {
  const found = await findArchived(options.dir, id);
  if (!found) {
    out(`no job ${id} in the archive ${options.dir}`);
    return 1;
  }
  out(JSON.stringify({ file: found.file, job: found.job, children: found.children }, null, 2));
  return 0;
}
