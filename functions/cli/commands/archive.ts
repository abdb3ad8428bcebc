import { S3Client } from '@aws-sdk/client-s3';
import { bucketSource, parseS3Url } from '../../adapters/s3/archive-bucket.js';
import {
  type ArchiveSource,
  directorySource,
  fileSource,
  findArchived,
  listArchive,
} from '../../local/job-archive.js';
import { CliError } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;

/** Where serve archives and `switchyard archive` reads by default (beside where serve runs). */
export const DEFAULT_ARCHIVE_DIR = 'switchyard-archive';

/** Where to read: `--s3 s3://bucket[/prefix]` (the deployed archive), `--file` (one downloaded object), or `--dir`. */
export interface ArchiveOptions {
  dir?: string;
  file?: string;
  s3?: string;
  /** Already chosen (tests). */
  source?: ArchiveSource;
}

export function archiveSource(options: ArchiveOptions): ArchiveSource {
  if (options.source) return options.source;
  const chosen = [options.s3, options.file].filter((value) => value !== undefined);
  if (chosen.length > 1) throw new CliError('give one of --s3 and --file (or --dir)');
  if (options.s3 !== undefined) {
    try {
      parseS3Url(options.s3);
    } catch (error) {
      throw new CliError((error as Error).message);
    }
    // The region and credentials come from the environment, as for the AWS CLI.
    return bucketSource(new S3Client({}), options.s3);
  }
  if (options.file !== undefined) return fileSource(options.file);
  return directorySource(options.dir ?? DEFAULT_ARCHIVE_DIR);
}

/** `switchyard archive list`: each file, its day, its jobs (top-level) and lines (children too). */
export async function listArchiveFiles(
  options: ArchiveOptions & { output?: string },
  out: Out,
): Promise<void> {
  const source = archiveSource(options);
  const files = await listArchive(source);
  if (outputFormat(options.output) === 'json') {
    out(JSON.stringify(files, null, 2));
    return;
  }
  if (!files.length) {
    out(
      `no archive in ${source.where}: serve --retain writes one (--archive-dir names where); deployed, -c archive=true`,
    );
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
export async function showArchivedJob(id: string, options: ArchiveOptions, out: Out): Promise<number> {
  const source = archiveSource(options);
  const found = await findArchived(source, id);
  if (!found) {
    out(`no job ${id} in the archive ${source.where}`);
    return 1;
  }
  out(JSON.stringify({ file: found.file, job: found.job, children: found.children }, null, 2));
  return 0;
}
