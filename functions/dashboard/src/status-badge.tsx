import type { JobStatus, StepStatus } from './api-types.js';

const LABELS: Record<JobStatus | StepStatus, string> = {
  scheduled: 'Scheduled',
  pending: 'Pending',
  waiting: 'Waiting',
  queued: 'Queued',
  running: 'Running',
  paused: 'Paused',
  completed: 'Completed',
  skipped: 'Skipped',
  suspended: 'Suspended',
  aborted: 'Aborted',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/**
 * The colour class of a job's status. A job's `waiting` is a running job with a step that waits for
 * someone, drawn as such a step is (`suspended`), not grey as a step that has not started.
 */
export function jobStateClass(status: JobStatus | 'all'): string {
  return `state-${status === 'waiting' ? 'suspended' : status}`;
}

/** A job's or step's state as a coloured pill (the same colours as the graph); `job`: a job's status. */
export function StatusBadge({
  status,
  large,
  job,
}: {
  status: JobStatus | StepStatus;
  large?: boolean;
  job?: boolean;
}) {
  const state = job ? jobStateClass(status as JobStatus) : `state-${status}`;
  return (
    <span class={`badge ${state}${large ? ' badge-large' : ''}`} data-status={status}>
      <span class="badge-dot" aria-hidden="true" />
      {LABELS[status] ?? status}
    </span>
  );
}
