import type { JobSummary } from '../api-types.js';
import { elapsedBetween, shortId } from '../format.js';
import { cutMessage, progressOf } from '../job-search.js';
import { ProgressBar } from '../progress-bar.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { StatusBadge } from '../status-badge.js';

/** The columns of a list of jobs, in the order `JobRow` fills them. */
export function JobTableHead({ workflow = true }: { workflow?: boolean }) {
  return (
    <thead>
      <tr>
        <th>Status</th>
        <th>Job</th>
        {workflow && <th>Workflow</th>}
        <th>Progress</th>
        <th>Error</th>
        <th>Started</th>
        <th class="col-duration">Duration</th>
      </tr>
    </thead>
  );
}

/**
 * One job in a list: its progress counts fan-out children as work (a 400-child fan-out moves as its
 * children finish), its error cut to one short line (whole on hover).
 */
export function JobRow({ job, now, workflow = true }: { job: JobSummary; now: number; workflow?: boolean }) {
  const href = routeHref({ view: 'job', id: job.uuid });
  const progress = progressOf(job.progress);
  return (
    <tr
      class="clickable-row"
      data-job={job.uuid}
      onClick={(event) => {
        if (!(event.target as HTMLElement).closest('a')) location.hash = href;
      }}
    >
      <td>
        <StatusBadge status={job.status} />
      </td>
      <td>
        <a class="mono" href={href} title={job.uuid}>
          {shortId(job.uuid)}
        </a>
      </td>
      {workflow && (
        <td>
          <a href={routeHref({ view: 'workflow', name: job.workflow })}>{job.workflow}</a>{' '}
          <span class="muted">v{job.version}</span>
        </td>
      )}
      <td>
        <div class="progress-cell" data-progress-done={progress.done} data-progress-total={progress.total}>
          <ProgressBar done={progress.done} total={progress.total} />
          <span class="progress-text">{progress.text}</span>
        </div>
      </td>
      <td class="col-error">
        {job.error ? (
          <span class="text-failed job-row-error" title={job.error.message}>
            {job.error.step && <span class="mono">{job.error.step}: </span>}
            {cutMessage(job.error.message, 60)}
          </span>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
      <td>
        <RelativeTime iso={job.createdAt} now={now} />
      </td>
      <td class="col-duration">
        {elapsedBetween(job.createdAt, job.status === 'running' ? undefined : job.updatedAt, now)}
      </td>
    </tr>
  );
}
