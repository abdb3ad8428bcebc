import { useState } from 'preact/hooks';
import {
  JOB_FILTERS,
  type JobFilter,
  type JobListPage,
  type JobSummary,
  type WorkflowListing,
} from '../api-types.js';
import { elapsedBetween, shortId } from '../format.js';
import { useNow, useResource } from '../hooks.js';
import { ProgressBar } from '../progress-bar.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { StatusBadge } from '../status-badge.js';
import { ErrorNote, Loading } from './notes.js';

const PAGE_SIZE = 25;
const FILTER_LABELS: Record<JobFilter, string> = {
  all: 'All',
  running: 'Running',
  paused: 'Paused',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** Top-level jobs, newest first, filtered by workflow and status, a page at a time. */
export function JobsView({ workflow, status }: { workflow?: string; status: JobFilter }) {
  // The cursors of the pages before this one: "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const query = new URLSearchParams({ detail: '1', status, limit: String(PAGE_SIZE) });
  if (workflow) query.set('workflow', workflow);
  if (cursor) query.set('cursor', cursor);
  const path = `api/jobs?${query}`;
  const page = useResource((client, signal) => client.request<JobListPage>(path, { signal }), path, 5000);
  const workflows = useResource(
    (client, signal) => client.request<WorkflowListing[]>('api/workflows', { signal }),
    'workflows',
  );
  const names = [...new Set((workflows.data ?? []).map((entry) => entry.name))];
  if (workflow && !names.includes(workflow)) names.push(workflow);
  const now = useNow();

  return (
    <section class="view">
      <div class="view-head">
        <h1>Jobs</h1>
        <p class="muted">Newest first{workflow ? ` · ${workflow}` : ''}</p>
      </div>
      <div class="filters card">
        <label class="filter-workflow">
          <span>Workflow</span>
          <select
            value={workflow ?? ''}
            onChange={(event) => {
              const value = (event.target as HTMLSelectElement).value;
              location.hash = routeHref({ view: 'jobs', status, ...(value ? { workflow: value } : {}) });
            }}
          >
            <option value="">All workflows</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <nav class="segmented" aria-label="Status">
          {JOB_FILTERS.map((filter) => (
            <a
              key={filter}
              href={routeHref({ view: 'jobs', status: filter, ...(workflow ? { workflow } : {}) })}
              class={filter === status ? `active state-${filter}` : undefined}
              aria-current={filter === status ? 'page' : undefined}
            >
              {FILTER_LABELS[filter]}
            </a>
          ))}
        </nav>
      </div>
      {page.error && <ErrorNote error={page.error} onRetry={page.reload} />}
      {!page.data && !page.error && <Loading what="jobs" />}
      {page.data && (
        <div class="card table-card">
          {page.data.jobs.length === 0 ? (
            <p class="empty-row">
              No {status === 'all' ? '' : `${status} `}jobs{workflow ? ` of ${workflow}` : ''}
              {cursors.length > 1 ? ' on this page' : ''}.
            </p>
          ) : (
            <table class="jobs-table">
              <thead>
                <tr>
                  <th>Status</th>
                  <th>Job</th>
                  <th>Workflow</th>
                  <th>Progress</th>
                  <th>Started</th>
                  <th class="col-duration">Duration</th>
                </tr>
              </thead>
              <tbody>
                {page.data.jobs.map((job) => (
                  <JobRow key={job.uuid} job={job} now={now} />
                ))}
              </tbody>
            </table>
          )}
          <div class="pager">
            <button
              type="button"
              class="button-ghost"
              disabled={cursors.length <= 1}
              onClick={() => setCursors(cursors.slice(0, -1))}
            >
              ← Newer
            </button>
            <span class="muted">Page {cursors.length}</span>
            <button
              type="button"
              class="button-ghost"
              disabled={!page.data.cursor}
              onClick={() => setCursors([...cursors, page.data?.cursor])}
            >
              Older →
            </button>
          </div>
        </div>
      )}
    </section>
  );
}

function JobRow({ job, now }: { job: JobSummary; now: number }) {
  const href = routeHref({ view: 'job', id: job.uuid });
  const { steps, stepsDone, children, childrenDone } = job.progress;
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
      <td>
        {job.workflow} <span class="muted">v{job.version}</span>
      </td>
      <td>
        <div class="progress-cell">
          <ProgressBar done={stepsDone} total={steps} />
          <span class="progress-text">
            {stepsDone}/{steps} steps
            {children > 0 && (
              <>
                {' · '}
                {childrenDone}/{children} children
              </>
            )}
          </span>
        </div>
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
