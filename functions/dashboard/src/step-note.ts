import type { JobDocument, StepView } from './api-types.js';
import { elapsedBetween, relativeTime } from './format.js';

/** The second line of a step's box in a job's drawing: where it stands, in a few words. */
export function stepNote(view: StepView | undefined, now: number): string {
  if (!view) return '';
  const attempt = view.attempts > 1 ? ` · attempt ${view.attempts}` : '';
  const children =
    view.children === undefined
      ? ''
      : `${view.childrenDone ?? 0}/${view.children} children${view.childrenFailed ? ` · ${view.childrenFailed} failed` : ''}`;
  switch (view.status) {
    case 'waiting':
      return view.retryAt ? `retry ${relativeTime(view.retryAt, now)}${attempt}` : 'waiting';
    case 'running':
      return children || `running ${elapsedBetween(view.startedAt, undefined, now)}${attempt}`;
    case 'completed': {
      const took = view.startedAt ? ` in ${elapsedBetween(view.startedAt, view.endedAt, now)}` : '';
      return view.children !== undefined ? `${view.children} children${took}` : `completed${took}`;
    }
    case 'suspended':
      return 'suspended · waits for a signal';
    case 'skipped':
      return 'skipped';
    case 'failed':
      if (view.handled) return 'failed · handled';
      return children || (view.attempts > 1 ? `failed after ${view.attempts} attempts` : 'failed');
    case 'cancelled':
      return children ? `cancelled · ${children}` : 'cancelled';
  }
}

/** The step to show first: a failed one, else a running one, else the last to complete, else the first. */
export function defaultStep(job: Pick<JobDocument, 'steps' | 'completed'>): string | undefined {
  const entries = Object.entries(job.steps);
  const withStatus = (status: string) => entries.find(([, view]) => view.status === status)?.[0];
  const lastCompleted = [...job.completed]
    .reverse()
    .find((entry) => entry.name !== '__end__' && entry.name !== '__start__')?.name;
  return withStatus('failed') ?? withStatus('running') ?? lastCompleted ?? entries[0]?.[0];
}
