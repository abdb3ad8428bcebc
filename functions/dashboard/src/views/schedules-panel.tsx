import type { WorkflowSchedulesDocument } from '../api-types.js';
import { absoluteTime } from '../format.js';
import { useResource } from '../hooks.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { ErrorNote } from './notes.js';

/**
 * A workflow's cron schedules with their next ticks, and its jobs waiting for a delayed start
 * (`?at=`), soonest first. Nothing is shown for a workflow that has neither. `startedHere` counts the
 * jobs the page's form started: a job scheduled there shows at once, not at the next refresh.
 */
export function SchedulesPanel({
  workflow,
  now,
  startedHere = 0,
}: {
  workflow: string;
  now: number;
  startedHere?: number;
}) {
  const schedules = useResource(
    (client, signal) =>
      client.request<WorkflowSchedulesDocument>(
        `api/workflow/${encodeURIComponent(workflow)}/schedules?ticks=3`,
        { signal },
      ),
    `schedules:${workflow}`,
    15_000,
    startedHere,
  );
  if (schedules.error) return <ErrorNote error={schedules.error} onRetry={schedules.reload} />;
  const document = schedules.data;
  if (!document || (document.schedules.length === 0 && document.scheduledCount === 0)) return null;
  return (
    <section class="card table-card schedules-panel" aria-label="Schedules">
      <div class="card-head">
        <h2>Schedules</h2>
        {document.scheduledCount > 0 && (
          <a href={routeHref({ view: 'jobs', workflow, status: 'scheduled' })}>
            {document.scheduledCount} scheduled →
          </a>
        )}
      </div>
      {document.schedules.length > 0 && (
        <table class="jobs-table">
          <thead>
            <tr>
              <th>Cron</th>
              <th>Time zone</th>
              <th>Catch-up</th>
              <th>Next ticks</th>
            </tr>
          </thead>
          <tbody>
            {document.schedules.map((schedule) => (
              <tr key={schedule.key} data-schedule={schedule.key}>
                <td class="mono">{schedule.cron}</td>
                <td>{schedule.timezone}</td>
                <td>{schedule.catchUp}</td>
                <td>
                  {document.enabled ? (
                    schedule.nextTicks.map((tick, index) => (
                      <span key={tick} class="next-tick" data-tick={tick} title={absoluteTime(tick)}>
                        {index > 0 ? ', ' : ''}
                        <RelativeTime iso={tick} now={now} />
                      </span>
                    ))
                  ) : (
                    <span class="muted">disabled: no ticks</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {document.scheduled.length > 0 && (
        <table class="jobs-table scheduled-jobs">
          <thead>
            <tr>
              <th>Scheduled job</th>
              <th>Starts</th>
            </tr>
          </thead>
          <tbody>
            {document.scheduled.map((job) => (
              <tr key={job.id} data-job={job.id}>
                <td class="mono">
                  <a href={routeHref({ view: 'job', id: job.id })}>{job.id}</a>
                </td>
                <td title={absoluteTime(job.startAt)}>
                  <RelativeTime iso={job.startAt} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
