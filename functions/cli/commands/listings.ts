import type { StepDefinition } from '../../../engine/index.js';
import type { QueueReport } from '../../api/api-service.js';
import { jobClock } from '../../api/job-clock.js';
import type { JobSummary } from '../../api/job-document.js';
import type { WorkflowListing } from '../../api/workflow-documents.js';
import { ApiClient, type ClientOptions } from '../client.js';
import { type DefinitionAnswer, stepKind } from '../job-view.js';
import { clockText, waitCell } from '../job-waits.js';
import { colourFor, outputFormat, type Paint, paint, renderTable } from '../terminal.js';
import { type SearchOptions, searchQuery } from './search.js';

type Out = (line: string) => void;
type ListingOptions = ClientOptions & { output?: string };

/** A cell too long for a table row, cut with an ellipsis. */
const cut = (text: string, width = 60) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

/** The most jobs `jobs --all` reads: past that it stops and says so. */
const MAX_ALL = 100_000;

/**
 * `switchyard jobs`: newest first, with a header, their run time and their error; searched on the
 * server (status, `--attr`, time ranges, `--error`); one page, or with `--all` every page.
 */
export async function listJobs(
  options: ListingOptions & SearchOptions & { limit?: string; all?: boolean; cursor?: string },
  out: Out,
): Promise<void> {
  const format = outputFormat(options.output);
  const query = searchQuery(options);
  query.set('detail', '1');
  const api = new ApiClient(options);
  const jobs: JobSummary[] = [];
  let cursor = options.cursor;
  do {
    const page = new URLSearchParams(query);
    page.set('limit', options.all ? '1000' : (options.limit ?? '50'));
    if (cursor) page.set('cursor', cursor);
    const answer = await api.get<{ jobs: JobSummary[]; cursor?: string }>(`/api/jobs?${page}`);
    jobs.push(...answer.jobs);
    cursor = answer.cursor;
  } while (options.all && cursor && jobs.length < MAX_ALL);
  if (format === 'json') {
    out(JSON.stringify(jobs, null, 2));
    return;
  }
  if (!jobs.length) {
    out(`no ${options.status ?? 'running'} jobs${options.workflow ? ` of ${options.workflow}` : ''}`);
    return;
  }
  const p = paint(colourFor(process.stdout));
  const now = Date.now();
  // Jobs with a step waiting for someone: a column then, and how to learn the command that unblocks it.
  const waiting = jobs.filter((job) => job.waitingFor?.length).length;
  const rows = jobs.map((job) => {
    const retries = job.retries ? `, ${job.retries} ${job.retries === 1 ? 'retry' : 'retries'}` : '';
    const progress = `${job.progress.stepsDone}/${job.progress.steps} steps${
      job.progress.children ? `, ${job.progress.childrenDone}/${job.progress.children} children` : ''
    }${retries}`;
    const error = job.error
      ? `${job.error.step ? `${job.error.step}: ` : ''}${job.error.message.split('\n')[0]}`
      : '';
    return [
      job.uuid,
      p.status(job.status),
      `${job.workflow} v${job.version}`,
      progress,
      job.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
      clockText(jobClock(job), now),
      ...(waiting ? [p.yellow(cut(waitCell(job.waitingFor ?? []), 40))] : []),
      p.red(cut(error)),
    ];
  });
  out(
    renderTable(
      [
        'ID',
        'STATUS',
        'WORKFLOW',
        'PROGRESS',
        'CREATED',
        'TIME',
        ...(waiting ? ['WAITING FOR'] : []),
        'ERROR',
      ],
      rows,
      p,
    ),
  );
  if (waiting)
    out(
      p.yellow(
        `${waiting === 1 ? '1 job waits' : `${waiting} jobs wait`} for someone: "switchyard status ID" prints the command that lets it go on`,
      ),
    );
  if (cursor)
    out(
      p.dim(
        options.all
          ? `stopped at ${jobs.length} jobs; --cursor ${cursor} goes on`
          : `more: --all for every page, or --cursor ${cursor} for the next`,
      ),
    );
}

/** `switchyard workflows`: each workflow, its latest version, whether it takes jobs, its jobs by status. */
export async function listWorkflows(options: ListingOptions, out: Out): Promise<void> {
  const format = outputFormat(options.output);
  const workflows = await new ApiClient(options).get<WorkflowListing[]>('/api/workflows');
  if (format === 'json') {
    out(JSON.stringify(workflows, null, 2));
    return;
  }
  if (!workflows.length) {
    out('no workflows: register some with "switchyard push FILE" or "switchyard serve --config FILE"');
    return;
  }
  const p = paint(colourFor(process.stdout));
  const vhosts = workflows.some((workflow) => workflow.vhost !== '/');
  // Jobs waiting for a slot (maxRunning) or for their time (submit --at): columns only when some wait.
  const waiting = workflows.some(
    (workflow) => (workflow.jobs.queued ?? 0) + (workflow.jobs.scheduled ?? 0) > 0,
  );
  const rows = workflows.map((workflow) => [
    p.bold(workflow.name),
    ...(vhosts ? [workflow.vhost] : []),
    `v${workflow.version}`,
    workflow.enabled ? 'yes' : p.yellow('no'),
    String(workflow.job_count),
    ...(waiting ? [String(workflow.jobs.queued ?? 0), String(workflow.jobs.scheduled ?? 0)] : []),
    String(workflow.jobs.completed ?? 0),
    (workflow.jobs.failed ?? 0) + (workflow.jobs.aborted ?? 0)
      ? p.red(String((workflow.jobs.failed ?? 0) + (workflow.jobs.aborted ?? 0)))
      : '0',
    cut(workflow.description, 50),
  ]);
  out(
    renderTable(
      [
        'NAME',
        ...(vhosts ? ['VHOST'] : []),
        'VERSION',
        'ENABLED',
        'RUNNING',
        ...(waiting ? ['QUEUED', 'SCHEDULED'] : []),
        'COMPLETED',
        'FAILED',
        'DESCRIPTION',
      ],
      rows,
      p,
    ),
  );
}

/** A step's keys as one line: `queue pricing, after load, timeout 30s, 2 retries, when …`. */
function stepKeys(step: StepDefinition): string {
  const info = stepKind(step);
  const keys: string[] = [];
  if (info.kind === 'worker') keys.push(`queue ${info.queue}`);
  if (info.kind === 'signal') keys.push('signal');
  if (info.kind === 'fanout') keys.push(`fan-out over task ${info.task}`);
  if (step.workflow) keys.push(`runs workflow ${step.workflow}${step.version ? ` v${step.version}` : ''}`);
  if (step.depends?.length) keys.push(`after ${step.depends.join(', ')}`);
  if (step.timeout) keys.push(`timeout ${step.timeout}`);
  if (step.retries) keys.push(`${step.retries} ${step.retries === 1 ? 'retry' : 'retries'}`);
  if (step.retryDelay) keys.push(`retry delay ${step.retryDelay}`);
  if (step.continueOnError) keys.push('continue on error');
  if (step.when) keys.push(`when ${step.when}`);
  if (step.input) keys.push(`input ${step.input}`);
  if (step.params) keys.push(`params ${JSON.stringify(step.params)}`);
  return keys.join(', ');
}

function stepLines(steps: readonly StepDefinition[], indent: string, p: Paint): string[] {
  const width = Math.max(...steps.map((step) => step.name.length), 4);
  return steps.map((step) =>
    `${indent}${p.bold(step.name.padEnd(width))}  ${stepKeys(step)}${step.description ? p.dim(`  — ${step.description}`) : ''}`.trimEnd(),
  );
}

/** `switchyard describe NAME`: a registered definition, its steps and their keys, its versions. */
export async function describeWorkflow(
  name: string,
  options: ListingOptions & { version?: string },
  out: Out,
): Promise<void> {
  const format = outputFormat(options.output);
  const query = options.version ? `?version=${encodeURIComponent(options.version)}` : '';
  const answer = await new ApiClient(options).get<DefinitionAnswer>(
    `/api/workflow/${encodeURIComponent(name)}/definition${query}`,
  );
  if (format === 'json') {
    out(JSON.stringify(answer, null, 2));
    return;
  }
  const p = paint(colourFor(process.stdout));
  const { definition } = answer;
  const latest = Math.max(...answer.versions.map((v) => v.version), answer.version);
  const lines = [
    `${p.bold(definition.name)}  v${answer.version}${answer.version === latest ? ' (latest)' : ` (latest is v${latest})`}  ${answer.enabled ? p.green('enabled') : p.yellow('disabled')}`,
  ];
  if (definition.description) lines.push(`  ${definition.description}`);
  const keys: string[] = [];
  if (definition.vhosts?.length) keys.push(`vhosts ${definition.vhosts.join(', ')}`);
  if (definition.timeout) keys.push(`timeout ${definition.timeout}`);
  if (definition.onFailure) keys.push(`on failure: workflow ${definition.onFailure}`);
  if (definition.maxRunning) keys.push(`at most ${definition.maxRunning} running at once (more queue)`);
  if (definition.params) keys.push(`params ${JSON.stringify(definition.params)}`);
  if (keys.length) lines.push(`  ${keys.join(', ')}`);
  lines.push('', p.bold('steps'), ...stepLines(definition.steps, '  ', p));
  for (const task of definition.tasks ?? []) {
    const about = [
      `one child per element of "${task.itemListKey}"`,
      ...(task.itemKey ? [`as "${task.itemKey}"`] : []),
      ...(task.concurrency ? [`at most ${task.concurrency} at once`] : []),
    ];
    lines.push('', `${p.bold(`task ${task.name}`)}  ${about.join(', ')}`);
    lines.push(...stepLines(task.steps, '  ', p));
  }
  lines.push(
    '',
    p.bold('versions'),
    ...answer.versions.map(
      (v) => `  v${v.version}  ${v.createdAt}${v.version === answer.version ? p.dim('  (shown)') : ''}`,
    ),
  );
  out(lines.join('\n'));
}

/** `switchyard queues`: each step queue, its ready messages and consumers, and a warning where none listens. */
export async function listQueues(options: ListingOptions & { workflow?: string }, out: Out): Promise<void> {
  const format = outputFormat(options.output);
  const query = options.workflow ? `?workflow=${encodeURIComponent(options.workflow)}` : '';
  const { queues } = await new ApiClient(options).get<{ queues: QueueReport[] }>(`/api/queues${query}`);
  if (format === 'json') {
    out(JSON.stringify(queues, null, 2));
    return;
  }
  if (!queues.length) {
    out(
      options.workflow ? `no step queues for workflow ${options.workflow}` : 'no step queues: no workflows',
    );
    return;
  }
  const p = paint(colourFor(process.stdout));
  const vhosts = queues.some((queue) => queue.vhost !== null);
  const rows = queues.map((queue) => {
    const consumers =
      queue.error || !queue.exists
        ? ''
        : queue.consumers === 0
          ? p.yellow('0')
          : String(queue.consumers ?? '');
    const note = queue.error
      ? p.red(cut(queue.error))
      : !queue.exists
        ? p.yellow('does not exist (no request sent to it yet?)')
        : queue.consumers === 0 && (queue.ready ?? 0) > 0
          ? p.yellow('no consumer: is a worker listening?')
          : '';
    return [
      p.bold(queue.queue),
      ...(vhosts ? [queue.vhost ?? '/'] : []),
      queue.exists ? String(queue.ready ?? '') : '',
      consumers,
      cut(
        queue.steps
          .map((step) => `${step.workflow}${step.task ? `/${step.task}` : ''}/${step.step}`)
          .join(', '),
        50,
      ),
      note,
    ];
  });
  out(renderTable(['QUEUE', ...(vhosts ? ['VHOST'] : []), 'READY', 'CONSUMERS', 'STEPS', ''], rows, p));
}
