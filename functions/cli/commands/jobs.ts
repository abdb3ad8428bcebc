import { readFile } from 'node:fs/promises';
import { parseJsonObjectBody } from '../../../engine/index.js';
import type { JobDocument } from '../../api/job-document.js';
import { ApiClient, CliError, type ClientOptions } from '../client.js';
import { formatJob, progressLine } from '../format-job.js';

/** `--input '{"a":1}'` or `--input @file.json`. */
async function readInput(input: string | undefined): Promise<string> {
  if (input === undefined) return '{}';
  const text = input.startsWith('@')
    ? await readFile(input.slice(1), 'utf8').catch(() => {
        throw new CliError(`cannot read the input file ${input.slice(1)}`);
      })
    : input;
  const parsed = parseJsonObjectBody(text);
  if (!parsed.ok) throw new CliError(`--input: ${parsed.error}`);
  return JSON.stringify(parsed.value);
}

const jobPath = (id: string) => `/api/job/${encodeURIComponent(id)}`;

export async function submit(
  name: string,
  options: ClientOptions & { input?: string; id?: string; wait?: boolean; version?: string },
  out: (line: string) => void,
): Promise<number> {
  const api = new ApiClient(options);
  const query = new URLSearchParams();
  if (options.id) query.set('id', options.id);
  if (options.version) query.set('version', options.version);
  const { body } = await api.request<{ id: string }>(
    'POST',
    `/api/workflow/${encodeURIComponent(name)}${query.size ? `?${query}` : ''}`,
    await readInput(options.input),
  );
  if (!options.wait) {
    out(body.id);
    return 0;
  }
  const job = await waitForEnd(api, body.id, () => {});
  return finish(job, out);
}

function finish(job: JobDocument, out: (line: string) => void): number {
  if (job.status === 'completed') {
    out(JSON.stringify(job.result ?? {}, null, 2));
    return 0;
  }
  out(
    `job ${job.uuid} ${job.status}${job.error ? `: ${job.error.step ? `step ${job.error.step}: ` : ''}${job.error.message}` : ''}`,
  );
  return 1;
}

async function waitForEnd(
  api: ApiClient,
  id: string,
  onChange: (job: JobDocument) => void,
): Promise<JobDocument> {
  let { body: job, etag } = await api.request<JobDocument>('GET', jobPath(id));
  onChange(job);
  // A paused job has not ended: it is watched until it does.
  while (job.status === 'running' || job.status === 'waiting' || job.status === 'paused') {
    // The version held is the poll's baseline: a change made since the last answer is answered at once.
    const changed = await api.getIfChanged<JobDocument>(`${jobPath(id)}?wait=20`, etag);
    if (changed) ({ body: job, etag } = changed);
    onChange(job);
  }
  return job;
}

export async function status(
  id: string,
  options: ClientOptions & { json?: boolean },
  out: (line: string) => void,
): Promise<void> {
  const job = await new ApiClient(options).get<JobDocument>(jobPath(id));
  out(options.json ? JSON.stringify(job, null, 2) : formatJob(job));
}

/** A live progress bar until the job ends; then its result or error. Exit status as `submit --wait`. */
export async function watch(
  id: string,
  options: ClientOptions,
  out: (line: string) => void,
): Promise<number> {
  const api = new ApiClient(options);
  const tty = process.stdout.isTTY;
  let last = '';
  let latest: JobDocument | undefined;
  const ticker = tty
    ? setInterval(() => {
        if (latest) process.stdout.write(`\r${progressLine(latest)}\u001b[K`);
      }, 500)
    : undefined;
  try {
    const job = await waitForEnd(api, id, (current) => {
      latest = current;
      const line = progressLine(current);
      if (tty) process.stdout.write(`\r${line}\u001b[K`);
      else if (line.replace(/, [\d.]+m?s {2}/, '  ') !== last) out(line);
      last = line.replace(/, [\d.]+m?s {2}/, '  ');
    });
    if (tty) process.stdout.write('\n');
    return finish(job, out);
  } finally {
    clearInterval(ticker);
  }
}

export async function listJobs(
  options: ClientOptions & { workflow?: string; status?: string; limit?: string },
  out: (line: string) => void,
): Promise<void> {
  const query = new URLSearchParams({ detail: '1' });
  if (options.workflow) query.set('workflow', options.workflow);
  if (options.status) query.set('status', options.status);
  query.set('limit', options.limit ?? '50');
  const { jobs } = await new ApiClient(options).get<{
    jobs: {
      uuid: string;
      workflow: string;
      version: number;
      status: string;
      createdAt: string;
      progress: { steps: number; stepsDone: number; children: number; childrenDone: number };
    }[];
  }>(`/api/jobs?${query}`);
  if (!jobs.length) {
    out(`no ${options.status ?? 'running'} jobs${options.workflow ? ` of ${options.workflow}` : ''}`);
    return;
  }
  for (const job of jobs) {
    const children = job.progress.children
      ? `, ${job.progress.childrenDone}/${job.progress.children} children`
      : '';
    out(
      `${job.uuid}  ${job.status.padEnd(9)}  ${job.workflow} v${job.version}  ${job.progress.stepsDone}/${job.progress.steps} steps${children}  ${job.createdAt}`,
    );
  }
}

export async function command(
  verb: 'cancel' | 'retry' | 'pause' | 'resume' | 'signal',
  id: string,
  options: ClientOptions & { input?: string; step?: string },
  out: (line: string) => void,
): Promise<void> {
  const api = new ApiClient(options);
  const { body } =
    verb === 'cancel'
      ? await api.request<JobDocument>('DELETE', jobPath(id))
      : verb === 'retry' || verb === 'pause' || verb === 'resume'
        ? await api.request<JobDocument>('POST', `${jobPath(id)}/${verb}`, '')
        : await api.request<JobDocument>(
            'POST',
            `${jobPath(id)}/signal/${encodeURIComponent(options.step ?? '')}`,
            await readInput(options.input),
          );
  out(formatJob(body));
}
