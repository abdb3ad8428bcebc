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

/** A job's or step's state as a coloured pill (the same colours as the graph). */
export function StatusBadge({ status, large }: { status: JobStatus | StepStatus; large?: boolean }) {
  return (
    <span class={`badge state-${status}${large ? ' badge-large' : ''}`} data-status={status}>
      <span class="badge-dot" aria-hidden="true" />
      {LABELS[status] ?? status}
    </span>
  );
}
