import { readFile } from 'node:fs/promises';
import { FINISHED_JOB_STATUSES, parseJsonObjectBody } from '../../../engine/index.js';
import type { JobDocument } from '../../api/job-document.js';
import { ApiClient, CliError, type ClientOptions } from '../client.js';
import { formatJob, progressLine } from '../format-job.js';
import {
  currentSteps,
  FanOutRates,
  QUEUE_CHECK_AFTER_MS,
  queueHints,
  type StepInfo,
  sentAt,
  stepsOf,
  waitingSteps,
} from '../job-view.js';
import { colourFor, paint } from '../terminal.js';

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
  options: ClientOptions & {
    input?: string;
    id?: string;
    wait?: boolean;
    version?: string;
    detach?: boolean;
    /** A delayed start (RFC 3339): the job is `scheduled` until then. */
    at?: string;
  },
  out: (line: string) => void,
): Promise<number> {
  const api = new ApiClient(options);
  const query = new URLSearchParams();
  if (options.id) query.set('id', options.id);
  if (options.version) query.set('version', options.version);
  if (options.at !== undefined) query.set('at', options.at);
  const { body } = await api.request<{ id: string }>(
    'POST',
    `/api/workflow/${encodeURIComponent(name)}${query.size ? `?${query}` : ''}`,
    await readInput(options.input),
  );
  // At once, whatever follows: a job that never moves (no worker) is still one to look up.
  const p = paint(colourFor(process.stderr));
  process.stderr.write(
    `${options.at === undefined ? p.green('started') : `${p.status('scheduled')} for ${options.at}:`} job ${p.bold(body.id)}  ${p.dim(api.jobLink(body.id))}\n`,
  );
  // A scheduled job has nothing to show live until its time: without --wait, its id is the answer.
  const tty = process.stdout.isTTY === true && options.detach !== true && options.at === undefined;
  if (!options.wait && !tty) {
    out(body.id);
    return 0;
  }
  if (tty) return watch(body.id, options, out);
  const job = await waitForEnd(api, body.id, () => {});
  return finish(job, out);
}

function finish(job: JobDocument, out: (line: string) => void): number {
  if (job.status === 'completed') {
    out(JSON.stringify(job.result ?? {}, null, 2));
    return 0;
  }
  const p = paint(colourFor(process.stdout));
  out(
    `job ${job.uuid} ${p.status(job.status)}${job.error ? `: ${job.error.step ? `step ${job.error.step}: ` : ''}${job.error.message}` : ''}`,
  );
  return 1;
}

/** A job's exit status: 1 once it failed, was aborted or cancelled; 0 otherwise (completed, or not ended yet). */
export function exitStatusOf(job: Pick<JobDocument, 'status'>): number {
  return job.status === 'failed' || job.status === 'aborted' || job.status === 'cancelled' ? 1 : 0;
}

const FINISHED: ReadonlySet<string> = new Set(FINISHED_JOB_STATUSES);

async function waitForEnd(
  api: ApiClient,
  id: string,
  onChange: (job: JobDocument) => void,
): Promise<JobDocument> {
  let { body: job, etag } = await api.request<JobDocument>('GET', jobPath(id));
  onChange(job);
  // A queued or paused job has not ended: it is watched until it does.
  let idle = 0;
  while (!FINISHED.has(job.status)) {
    // The version held is the poll's baseline: a change made since the last answer is answered at once.
    const asked = Date.now();
    const changed = await api.getIfChanged<JobDocument>(`${jobPath(id)}?wait=20`, etag);
    if (changed) ({ body: job, etag } = changed);
    onChange(job);
    // Deployed, the API answers at once rather than hold a Lambda (docs/deploying.md, "Live updates"):
    // an unchanged answer that came back without waiting is polled again after a growing pause.
    idle = changed ? 0 : idle + 1;
    if (!changed && Date.now() - asked < QUICK_ANSWER_MS) await sleep(pollPauseMs(idle));
  }
  return job;
}

/** An answer faster than this did not wait on the server. */
const QUICK_ANSWER_MS = 1_000;

/** The pause before the next poll after `idle` unchanged answers in a row: 1 s, doubling, at most 10 s. */
export function pollPauseMs(idle: number): number {
  return Math.min(10_000, 1_000 * 2 ** Math.max(0, idle - 1));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function status(
  id: string,
  options: ClientOptions & { json?: boolean },
  out: (line: string) => void,
): Promise<number> {
  const api = new ApiClient(options);
  const job = await api.get<JobDocument>(jobPath(id));
  if (options.json) {
    out(JSON.stringify(job, null, 2));
    return exitStatusOf(job);
  }
  const p = paint(colourFor(process.stdout));
  const steps = await stepsOf(api, job);
  out(formatJob(job, { paint: p, steps, namespace: api.namespace }));
  for (const hint of await queueHints(api, job, steps)) out(p.yellow(hint));
  return exitStatusOf(job);
}

/** Whether a step has been running for `QUEUE_CHECK_AFTER_MS` or more. */
function slowSteps(job: JobDocument, now = Date.now()): boolean {
  return Object.values(job.steps).some((step) => {
    const since = sentAt(step);
    return (
      step.status === 'running' && since !== undefined && now - Date.parse(since) >= QUEUE_CHECK_AFTER_MS
    );
  });
}

/** How often `watch` looks at the queues of steps that do not move. */
const QUEUE_LOOK_MS = 5_000;

/**
 * A live progress bar until the job ends, with the step(s) running (a fan-out's rate and ETA) and,
 * for a step that does not move, what its queue holds; then its result or error. Exit status as
 * `submit --wait`.
 */
export async function watch(
  id: string,
  options: ClientOptions,
  out: (line: string) => void,
): Promise<number> {
  const api = new ApiClient(options);
  const tty = process.stdout.isTTY === true;
  const p = paint(colourFor(process.stdout));
  const rates = new FanOutRates();
  let steps: Map<string, StepInfo> | undefined;
  let stepsAsked = false;
  let hints: string[] = [];
  let lookedAt = 0;
  let last = '';
  let latest: JobDocument | undefined;
  /** The lines of the view: the bar, the step(s) running, the queue warnings. */
  const view = (job: JobDocument): string[] => {
    const bar = progressLine(job);
    const running = currentSteps(job, rates, steps);
    return [
      p.status(job.status, bar),
      ...(running ? [`  ${running}`] : []),
      ...waitingSteps(job, api.namespace).map((line) => `  ${p.yellow(line)}`),
      ...hints.map((hint) => `  ${p.yellow(hint)}`),
    ];
  };
  let drawn = 0;
  const draw = (job: JobDocument) => {
    const lines = view(job);
    // Back to the view's first line, then each line anew.
    const up = drawn > 1 ? `\u001b[${drawn - 1}A` : '';
    process.stdout.write(`${up}\r${lines.map((line) => `${line}\u001b[K`).join('\n')}\u001b[J`);
    drawn = lines.length;
  };
  const look = async (job: JobDocument) => {
    // Only a step that has not moved for a while is worth the look (and the definition's reading).
    if (!slowSteps(job)) {
      hints = [];
      return;
    }
    if (!stepsAsked) {
      stepsAsked = true;
      steps = await stepsOf(api, job);
    }
    if (Date.now() - lookedAt < QUEUE_LOOK_MS) return;
    lookedAt = Date.now();
    hints = await queueHints(api, job, steps);
  };
  const ticker = tty
    ? setInterval(() => {
        if (!latest) return;
        const job = latest;
        void look(job).then(() => {
          if (latest === job && (job.status === 'running' || job.status === 'waiting')) draw(job);
        });
      }, 500)
    : undefined;
  try {
    const job = await waitForEnd(api, id, (current) => {
      latest = current;
      if (tty) {
        draw(current);
        return;
      }
      const lines = view(current);
      // Without a terminal, a line only when something other than the clock changed.
      const key = lines.map((line) => line.replace(/\b\d[\d.]*(?:ms|[dhms])\b/g, '')).join('\n');
      if (key !== last) for (const line of lines) out(line);
      last = key;
      void look(current);
    });
    if (tty) {
      draw(job);
      process.stdout.write('\n');
    }
    return finish(job, out);
  } finally {
    clearInterval(ticker);
  }
}

/** The 202 answer to a signal its step does not wait for yet (docs/api.md). */
interface SignalKept {
  buffered: true;
  message: string;
  job: JobDocument;
}

export async function command(
  verb: 'cancel' | 'retry' | 'pause' | 'resume' | 'signal',
  id: string,
  options: ClientOptions & { input?: string; step?: string },
  out: (line: string) => void,
): Promise<void> {
  const api = new ApiClient(options);
  if (verb === 'signal') {
    const { status, body } = await api.request<JobDocument | SignalKept>(
      'POST',
      `${jobPath(id)}/signal/${encodeURIComponent(options.step ?? '')}`,
      await readInput(options.input),
    );
    // 202: the step does not wait yet; the job keeps the signal and hands it over when it does.
    if (status === 202 && 'buffered' in body) {
      out(`signal kept: ${body.message}`);
      return out(formatJob(body.job, { namespace: api.namespace }));
    }
    return out(formatJob(body as JobDocument, { namespace: api.namespace }));
  }
  const { body } =
    verb === 'cancel'
      ? await api.request<JobDocument>('DELETE', jobPath(id))
      : await api.request<JobDocument>('POST', `${jobPath(id)}/${verb}`, '');
  out(formatJob(body, { namespace: api.namespace }));
}

/** `switchyard rerun ID --from STEP [--input FILE]`: `POST /api/job/{id}/rerun`. */
export async function rerun(
  id: string,
  options: ClientOptions & { from: string; input?: string },
  out: (line: string) => void,
): Promise<void> {
  const api = new ApiClient(options);
  const body: Record<string, unknown> = { from: options.from };
  if (options.input !== undefined) {
    const file = options.input.startsWith('@') ? options.input : `@${options.input}`;
    body.input = JSON.parse(await readInput(file));
  }
  const { body: job } = await api.request<JobDocument>('POST', `${jobPath(id)}/rerun`, JSON.stringify(body));
  out(formatJob(job, { namespace: api.namespace }));
}
