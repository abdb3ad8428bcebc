import type { JobDocument } from '../api/job-document.js';

const SYMBOL: Record<string, string> = {
  completed: '✓',
  running: '●',
  waiting: '○',
  paused: '‖',
  failed: '✗',
  cancelled: '⊘',
};

function seconds(from?: string, to?: string): string {
  if (!from) return '';
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** The job, readable by a person: its status, each step's state, then its result or error. */
export function formatJob(job: JobDocument): string {
  const lines = [
    `job ${job.uuid}  ${job.workflow} v${job.version}  ${job.status}  (${seconds(job.createdAt, job.endedAt)})`,
  ];
  if (job.parent) lines.push(`  child ${job.index} of ${job.parent}`);
  const width = Math.max(...Object.keys(job.steps).map((name) => name.length), 4);
  for (const [name, step] of Object.entries(job.steps)) {
    const details: string[] = [];
    if (step.children !== undefined)
      details.push(
        `${step.childrenDone ?? 0}/${step.children} children${step.childrenFailed ? `, ${step.childrenFailed} failed` : ''}`,
      );
    if (step.attempts > 1) details.push(`${step.attempts} attempts`);
    if (step.startedAt) details.push(seconds(step.startedAt, step.endedAt));
    if (step.retryAt) details.push(`retry at ${step.retryAt}`);
    if (step.error && step.status !== 'completed') details.push(`error: ${step.error}`);
    lines.push(
      `  ${SYMBOL[step.status] ?? ' '} ${name.padEnd(width)}  ${step.status.padEnd(9)}  ${details.join(', ')}`.trimEnd(),
    );
  }
  if (job.error)
    lines.push(
      `error: ${job.error.step ? `step ${job.error.step}, attempt ${job.error.attempt}: ` : ''}${job.error.message}`,
    );
  if (job.result !== undefined) lines.push(`result: ${JSON.stringify(job.result, null, 2)}`);
  return lines.join('\n');
}

/** Steps and children done out of total, as a bar: `[#######-------] 3/5 steps, 7/12 children, 4.2s` */
export function progressLine(job: JobDocument, width = 30): string {
  const steps = Object.values(job.steps);
  const stepsDone = steps.filter((step) => step.status === 'completed').length;
  const children = steps.reduce((sum, step) => sum + (step.children ?? 0), 0);
  const childrenDone = steps.reduce((sum, step) => sum + (step.childrenDone ?? 0), 0);
  const total = steps.length + children;
  const done = stepsDone + childrenDone;
  const filled = total ? Math.round((done / total) * width) : width;
  const parts = [`${stepsDone}/${steps.length} steps`];
  if (children) parts.push(`${childrenDone}/${children} children`);
  parts.push(seconds(job.createdAt, job.endedAt));
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${parts.join(', ')}  ${job.status}`;
}
