import { jobClock } from '../api/job-clock.js';
import type { JobDocument, StepView, WaitView } from '../api/job-document.js';
import { type StepInfo, sentAt } from './job-view.js';
import { clockText, describeWait, unblockCommand } from './job-waits.js';
import { humanDuration, paint as noPaint, type Paint } from './terminal.js';

const SYMBOL: Record<string, string> = {
  completed: '✓',
  running: '●',
  suspended: '◌',
  aborted: '✗',
  waiting: '○',
  queued: '…',
  skipped: '↷',
  paused: '‖',
  failed: '✗',
  cancelled: '⊘',
};

function seconds(from?: string, to?: string, now = Date.now()): string {
  if (!from) return '';
  return humanDuration(Math.max(0, (to ? Date.parse(to) : now) - Date.parse(from)));
}

/**
 * A step's status as people read it: a failure its workflow handled (`continueOnError`) says so, a
 * running signal step says it waits for its signal, a `sleep:` step until when, a loop its iteration.
 */
function stepStatus(step: StepView, wait: WaitView | undefined): string {
  if (step.handled) return 'failed · handled';
  if (wait?.kind === 'signal') return 'waiting for signal';
  if (step.status === 'running' && step.sleepingUntil) return `sleeping until ${step.sleepingUntil}`;
  if (step.status === 'running' && step.iterations) return `running (iteration ${step.iterations + 1})`;
  return step.status;
}

export interface FormatOptions {
  /** Colours (none by default). */
  paint?: Paint;
  /**
   * The steps' kinds, from the definition: a worker step's time is then told as what it is, from
   * the request sent to the reply (its queue wait and its run: the manager cannot tell them apart).
   */
  steps?: ReadonlyMap<string, StepInfo>;
  /** The namespace the job was read in: the commands printed name it. */
  namespace?: string;
  /** @default Date.now() */
  now?: number;
}

/**
 * A worker step's time: `in queue or running for 3.0s`, or `1.2s from sent to reply`, and the total over
 * its attempts; a suspended one, how long its worker took to answer `suspend`.
 */
function workerTime(step: StepView, now: number): string[] {
  const sent = sentAt(step);
  if (!sent) return [];
  if (step.status === 'running') return [`in queue or running for ${seconds(sent, undefined, now)}`];
  if (step.status === 'suspended') {
    const answered = step.attempts.at(-1)?.endedAt;
    return answered ? [`worker answered suspend after ${seconds(sent, answered)}`] : [];
  }
  const details = [`${seconds(sent, step.endedAt, now)} from sent to reply (queue wait included)`];
  if (step.attempt > 1 && step.startedAt && step.startedAt !== sent)
    details.push(`${seconds(step.startedAt, step.endedAt, now)} over all attempts`);
  return details;
}

/** The job, readable by a person: its status, its links, each step's state, then its result or error. */
export function formatJob(job: JobDocument, options: FormatOptions = {}): string {
  const p = options.paint ?? noPaint(false);
  const now = options.now ?? Date.now();
  const waits = job.waitingFor ?? [];
  const lines = [
    `job ${p.bold(job.uuid)}  ${job.workflow} v${job.version}  ${p.status(job.status)}  (${clockText(jobClock(job), now)})`,
  ];
  if (job.parent) lines.push(`  child ${job.index} of ${job.parent}`);
  if (job.status === 'queued')
    lines.push(
      `  waits for a slot of ${job.workflow}'s maxRunning${job.queuePosition ? `: number ${job.queuePosition} in the queue` : ''}`,
    );
  if (job.calledBy)
    lines.push(
      `  called by job ${job.calledBy.id}, step ${job.calledBy.step}${job.calledBy.attempt > 1 ? ` (attempt ${job.calledBy.attempt})` : ''}`,
    );
  if (job.causedBy) lines.push(`  started because job ${job.causedBy} failed`);
  if (job.followUp) lines.push(`  on failure: started job ${job.followUp}`);
  const steps = Object.entries(job.steps);
  const waitOf = (name: string) => waits.find((wait) => wait.step === name);
  const width = Math.max(...steps.map(([name]) => name.length), 4);
  const statusWidth = Math.max(...steps.map(([name, step]) => stepStatus(step, waitOf(name)).length), 9);
  for (const [name, step] of steps) {
    const wait = waitOf(name);
    const details: string[] = [];
    if (step.status === 'skipped' && step.skipReason) details.push(step.skipReason);
    if (step.children !== undefined)
      details.push(
        `${step.childrenDone ?? 0}/${step.children} children${step.childrenFailed ? `, ${step.childrenFailed} failed` : ''}`,
      );
    if (step.job) details.push(`called job ${step.job}${step.calledStatus === 'paused' ? ' (paused)' : ''}`);
    if (step.attempt > 1) details.push(`${step.attempt} attempts`);
    const kind = options.steps?.get(name)?.kind;
    if (wait && wait.kind !== 'paused-call')
      details.push(`for ${seconds(wait.since, undefined, now)}${wait.note ? `: ${wait.note}` : ''}`);
    if (kind === 'worker' && step.status !== 'skipped') details.push(...workerTime(step, now));
    else if (step.startedAt && !wait) details.push(seconds(step.startedAt, step.endedAt, now));
    if (step.retryAt) details.push(`retry at ${step.retryAt}`);
    if (step.error && step.status !== 'completed') details.push(`error: ${step.error}`);
    const shown = step.handled ? 'failed' : wait ? 'paused' : step.status;
    lines.push(
      `  ${p.status(shown, SYMBOL[wait ? 'suspended' : step.status] ?? ' ')} ${name.padEnd(width)}  ${p.status(shown, stepStatus(step, wait).padEnd(statusWidth))}  ${details.join(', ')}`.trimEnd(),
    );
  }
  if (waits.length) {
    lines.push(p.yellow('waiting for someone:'));
    for (const wait of waits)
      lines.push(
        `  ${wait.step} (${describeWait(wait, now)})  →  ${p.bold(unblockCommand(job.uuid, wait, options.namespace))}`,
      );
  }
  if (job.pendingSignals?.length) {
    lines.push('signals kept until their step waits:');
    for (const signal of job.pendingSignals)
      lines.push(`  ${signal.step} (since ${signal.at}): ${JSON.stringify(signal.body)}`);
  }
  if (job.error)
    lines.push(
      p.red(
        `error: ${job.error.step ? `step ${job.error.step}, attempt ${job.error.attempt}: ` : ''}${job.error.message}`,
      ),
    );
  if (job.result !== undefined) lines.push(`result: ${JSON.stringify(job.result, null, 2)}`);
  return lines.join('\n');
}

/**
 * Steps and children done out of total, as a bar: `[#######-------] 3/5 steps done, 7/12 children, 4.2s`.
 * A step is done once it settled: completed, skipped, or failed with its failure handled; the skipped and
 * the handled ones are counted in brackets, as `3/4 steps done (1 skipped, 1 failure handled)`.
 */
export function progressLine(job: JobDocument, width = 30, now = Date.now()): string {
  const steps = Object.values(job.steps);
  const skipped = steps.filter((step) => step.status === 'skipped').length;
  const handled = steps.filter((step) => step.handled).length;
  const stepsDone = steps.filter((step) => step.status === 'completed').length + skipped + handled;
  const children = steps.reduce((sum, step) => sum + (step.children ?? 0), 0);
  const childrenDone = steps.reduce((sum, step) => sum + (step.childrenDone ?? 0), 0);
  const total = steps.length + children;
  const done = stepsDone + childrenDone;
  const filled = total ? Math.round((done / total) * width) : width;
  const settled: string[] = [];
  if (skipped) settled.push(`${skipped} skipped`);
  if (handled) settled.push(`${handled} ${handled === 1 ? 'failure' : 'failures'} handled`);
  const parts = [
    `${stepsDone}/${steps.length} steps done${settled.length ? ` (${settled.join(', ')})` : ''}`,
  ];
  if (children) parts.push(`${childrenDone}/${children} children`);
  parts.push(clockText(jobClock(job), now));
  const waits = job.waitingFor?.length;
  const status = waits
    ? `${job.status} · ${waits === 1 ? 'a step waits' : `${waits} steps wait`} for someone`
    : job.status;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${parts.join(', ')}  ${status}`;
}
