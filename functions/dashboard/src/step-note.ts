import type { JobDocument, StepDefinition, StepView, WaitView } from './api-types.js';
import { absoluteTime, elapsedBetween, relativeTime } from './format.js';

/**
 * The second line of a step's box in a job's drawing: where it stands, in a few words. A skipped step
 * says why: its condition (from the definition, `step`) was false, or everything before it was skipped.
 * A step that waits for someone (`wait`, from the job's `waitingFor`) says so, and a suspended one
 * its worker's note.
 */
export function stepNote(
  view: StepView | undefined,
  now: number,
  step?: Pick<StepDefinition, 'when'>,
  wait?: WaitView,
): string {
  if (!view) return '';
  if (wait?.kind === 'signal') return `waiting for signal · ${elapsedBetween(wait.since, undefined, now)}`;
  if (wait?.kind === 'paused-call') return 'its called job is paused';
  const attempt = view.attempt > 1 ? ` · attempt ${view.attempt}` : '';
  const children =
    view.children === undefined
      ? ''
      : `${view.childrenDone ?? 0}/${view.children} children${view.childrenFailed ? ` · ${view.childrenFailed} failed` : ''}`;
  switch (view.status) {
    case 'waiting':
      return view.retryAt ? `retry ${relativeTime(view.retryAt, now)}${attempt}` : 'waiting';
    case 'running':
      if (view.sleepingUntil)
        return `sleeping until ${absoluteTime(view.sleepingUntil)} (${relativeTime(view.sleepingUntil, now)})`;
      if (view.iterations)
        return `iteration ${view.iterations + 1} · ${view.retryAt ? `next ${relativeTime(view.retryAt, now)}` : 'running'}`;
      return children || `running ${elapsedBetween(view.startedAt, undefined, now)}${attempt}`;
    case 'completed': {
      const took = view.startedAt ? ` in ${elapsedBetween(view.startedAt, view.endedAt, now)}` : '';
      return view.children !== undefined ? `${view.children} children${took}` : `completed${took}${attempt}`;
    }
    case 'suspended':
      return view.suspendNote ? `suspended: ${view.suspendNote}` : 'suspended · waits for a signal';
    case 'skipped':
      return skippedNote(view, step);
    case 'failed':
      if (view.handled) return 'failed · handled';
      return children || (view.attempt > 1 ? `failed after ${view.attempt} attempts` : 'failed');
    case 'cancelled':
      return children ? `cancelled · ${children}` : 'cancelled';
  }
}

/**
 * The step to show first: one that failed the job, else a running one, else a failure the workflow
 * handled, else the last to complete, else the first.
 */
export function defaultStep(job: Pick<JobDocument, 'steps' | 'completed'>): string | undefined {
  const entries = Object.entries(job.steps);
  const first = (test: (view: StepView) => boolean) => entries.find(([, view]) => test(view))?.[0];
  const lastCompleted = [...job.completed]
    .reverse()
    .find((entry) => entry.name !== '__end__' && entry.name !== '__start__')?.name;
  return (
    first((view) => view.status === 'failed' && !view.handled) ??
    first((view) => view.status === 'running') ??
    first((view) => view.handled === true) ??
    lastCompleted ??
    entries[0]?.[0]
  );
}

function skippedNote(view: StepView, step?: Pick<StepDefinition, 'when'>): string {
  // The engine's reason for a false condition is `"when" is false: <source>`.
  if (step?.when && (!view.skipReason || view.skipReason.startsWith('"when" is false')))
    return `skipped · ${step.when} is false`;
  return view.skipReason ? `skipped · ${view.skipReason}` : 'skipped';
}
