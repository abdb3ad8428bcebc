import { jobClock } from '../../../api/job-clock.js';
import type { JobSummary, WaitView } from '../api-types.js';
import { clockCell } from '../clock-text.js';
import { plural, shortId } from '../format.js';
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
        <th>Created</th>
        <th class="col-duration">Time</th>
      </tr>
    </thead>
  );
}

/** What a step waiting for someone is shown as in a list: `waiting for signal: approve`, `suspended: <note>`. */
export function waitText(wait: WaitView): string {
  switch (wait.kind) {
    case 'signal':
      return `waiting for signal: ${wait.step}`;
    case 'suspended':
      return `suspended: ${wait.note ?? wait.step}`;
    case 'paused-call':
      return `${wait.step}: its called job is paused`;
  }
}

/**
 * One job in a list: its status and what it waits for, its progress counting fan-out children as
 * work (a 400-child fan-out moves as its children finish) and the attempts retried, its error cut to
 * one short line (whole on hover), its clock as its status has it (a scheduled job has not started).
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
      <td class="col-status">
        <StatusBadge status={job.status} job />
        {job.waitingFor?.map((wait) => (
          <span
            key={wait.step}
            class="wait-note"
            data-wait={wait.kind}
            data-wait-step={wait.step}
            title={`${wait.step}: ${waitText(wait)}`}
          >
            {waitText(wait)}
          </span>
        ))}
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
          {job.retries !== undefined && job.retries > 0 && (
            <span
              class="tag tag-retries"
              data-retries={job.retries}
              title="Attempts sent again after one failed"
            >
              {plural(job.retries, 'retry', 'retries')}
            </span>
          )}
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
      <td class="col-duration" data-clock={jobClock(job).phase}>
        {clockCell(jobClock(job), now)}
      </td>
    </tr>
  );
}
