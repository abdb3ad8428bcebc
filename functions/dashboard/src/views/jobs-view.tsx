import { useEffect, useState } from 'preact/hooks';
import { type ApiClient, ApiRequestError } from '../api-client.js';
import {
  JOB_FILTERS,
  type JobDocument,
  type JobFilter,
  type JobListPage,
  type JsonObject,
  type WorkflowListing,
} from '../api-types.js';
import { plural } from '../format.js';
import { useNow, useResource } from '../hooks.js';
import {
  filterJobs,
  type IdQuery,
  parseIdQuery,
  parseInputFilter,
  summaryFromDocument,
} from '../job-search.js';
import { type Route, routeHref } from '../route.js';
import { jobStateClass } from '../status-badge.js';
import { JobRow, JobTableHead } from './job-row.js';
import { ErrorNote, Loading } from './notes.js';

const PAGE_SIZE = 25;
const FILTER_LABELS: Record<JobFilter, string> = {
  all: 'All',
  scheduled: 'Scheduled',
  pending: 'Pending',
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  paused: 'Paused',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
  aborted: 'Aborted',
};

/** A job's input never changes: each is read once per page load, for the input search. */
const inputs = new Map<string, JsonObject>();

async function loadInputs(client: ApiClient, ids: readonly string[], signal: AbortSignal): Promise<void> {
  const missing = ids.filter((id) => !inputs.has(id));
  await Promise.all(
    missing.map(async (id) => {
      const job = await client.request<JobDocument>(`api/job/${id}`, { signal });
      inputs.set(id, job.input);
    }),
  );
}

type JobsRoute = Extract<Route, { view: 'jobs' }>;

/**
 * Top-level jobs, newest first, filtered by workflow and status, a page at a time; searched on the
 * server by search attributes (`customer=c-42`, the workflow's `searchAttributes:`) and error text,
 * every page alike; and on the page by job id (a whole id is looked up, wherever the job is; a prefix
 * is matched among the jobs of the page) and by an input field (`key=value`, matched against the
 * inputs of the page's jobs: an input field not declared as a search attribute has no index).
 */
export function JobsView({ workflow, status, id, input, attr, error }: Omit<JobsRoute, 'view'>) {
  // The cursors of the pages before this one: "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const idQuery = parseIdQuery(id ?? '');
  const inputFilter = parseInputFilter(input ?? '');
  const query = new URLSearchParams({ detail: '1', status, limit: String(PAGE_SIZE) });
  if (workflow) query.set('workflow', workflow);
  if (attr) query.set('attr', attr);
  if (error) query.set('error', error);
  if (cursor) query.set('cursor', cursor);
  const exact = idQuery.kind === 'exact' ? idQuery.id : undefined;
  const path = exact ? `api/job/${exact}` : `api/jobs?${query}`;
  const page = useResource(
    async (client, signal): Promise<JobListPage & { inputsLoaded?: boolean }> => {
      if (exact) {
        try {
          return { jobs: [summaryFromDocument(await client.request<JobDocument>(path, { signal }))] };
        } catch (error) {
          if (error instanceof ApiRequestError && error.status === 404) return { jobs: [] };
          throw error;
        }
      }
      const listed = await client.request<JobListPage>(path, { signal });
      if (inputFilter)
        await loadInputs(
          client,
          listed.jobs.map((job) => job.uuid),
          signal,
        );
      return listed;
    },
    `${path}|${input ?? ''}`,
    5000,
  );
  const workflows = useResource(
    (client, signal) => client.request<WorkflowListing[]>('api/workflows', { signal }),
    'workflows',
  );
  const names = [...new Set((workflows.data ?? []).map((entry) => entry.name))];
  if (workflow && !names.includes(workflow)) names.push(workflow);
  const now = useNow();
  const here = (change: Partial<JobsRoute>): string =>
    routeHref({
      view: 'jobs',
      status,
      ...(workflow ? { workflow } : {}),
      ...(id ? { id } : {}),
      ...(input ? { input } : {}),
      ...(attr ? { attr } : {}),
      ...(error ? { error } : {}),
      ...change,
    } as JobsRoute);
  // A new search starts from the newest page.
  useEffect(() => setCursors([undefined]), [id, input, attr, error, status, workflow]);
  const searching = idQuery.kind !== 'none' || inputFilter !== undefined;
  const shown = page.data ? filterJobs(page.data.jobs, idQuery, inputFilter, inputs) : [];

  return (
    <section class="view">
      <div class="view-head">
        <h1>Jobs</h1>
        <p class="muted">
          Newest first
          {workflow ? (
            <>
              {' · '}
              <a href={routeHref({ view: 'workflow', name: workflow })}>{workflow}</a>
            </>
          ) : (
            ''
          )}
        </p>
      </div>
      <div class="filters card">
        <label class="filter-workflow">
          <span>Workflow</span>
          <select
            value={workflow ?? ''}
            onChange={(event) => {
              const value = (event.target as HTMLSelectElement).value;
              location.hash = here({ workflow: value || undefined });
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
              href={here({ status: filter })}
              class={filter === status ? `active ${jobStateClass(filter)}` : undefined}
              aria-current={filter === status ? 'page' : undefined}
            >
              {FILTER_LABELS[filter]}
            </a>
          ))}
        </nav>
        <SearchForm
          given={{ id: id ?? '', input: input ?? '', attr: attr ?? '', error: error ?? '' }}
          onSearch={(next) => (location.hash = here(next))}
        />
      </div>
      {searching && (
        <SearchNote idQuery={idQuery} input={input} shown={shown.length} page={page.data} exact={!!exact} />
      )}
      {page.error && <ErrorNote error={page.error} onRetry={page.reload} />}
      {!page.data && !page.error && <Loading what="jobs" />}
      {page.data && (
        <div class="card table-card">
          {shown.length === 0 ? (
            <p class="empty-row">
              {searching
                ? exact
                  ? `No job ${exact}.`
                  : `No job on this page matches${page.data.cursor ? ': the older pages may hold some.' : '.'}`
                : attr || error
                  ? `No ${status === 'all' ? '' : `${status} `}job${workflow ? ` of ${workflow}` : ''} matches${attr ? ` ${attr}` : ''}${error ? `${attr ? ' and' : ''} an error holding “${error}”` : ''}.`
                  : `No ${status === 'all' ? '' : `${status} `}jobs${workflow ? ` of ${workflow}` : ''}${cursors.length > 1 ? ' on this page' : ''}.`}
            </p>
          ) : (
            <table class="jobs-table">
              <JobTableHead />
              <tbody>
                {shown.map((job) => (
                  <JobRow key={job.uuid} job={job} now={now} />
                ))}
              </tbody>
            </table>
          )}
          {!exact && (
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
          )}
        </div>
      )}
    </section>
  );
}

type SearchFields = { id: string; input: string; attr: string; error: string };

/**
 * The search fields: searching sets them in the URL, so a search can be linked to. Attributes and
 * error text go to the server (GET /api/jobs?attr=&error=); the id and input search the page.
 */
function SearchForm({
  given,
  onSearch,
}: {
  given: SearchFields;
  onSearch(next: Partial<Record<keyof SearchFields, string | undefined>>): void;
}) {
  const [text, setText] = useState(given);
  useEffect(() => setText(given), [given.id, given.input, given.attr, given.error]);
  const invalid = parseIdQuery(text.id).kind === 'invalid';
  const field = (name: keyof SearchFields, label: string, placeholder: string) => (
    <label>
      <span>{label}</span>
      <input
        name={name}
        class="mono"
        type="search"
        placeholder={placeholder}
        value={text[name]}
        aria-invalid={name === 'id' && invalid ? 'true' : undefined}
        onInput={(event) => setText({ ...text, [name]: (event.target as HTMLInputElement).value })}
      />
    </label>
  );
  const trimmed = (value: string) => value.trim() || undefined;
  return (
    <form
      class="job-search"
      aria-label="Search jobs"
      onSubmit={(event) => {
        event.preventDefault();
        if (invalid) return;
        onSearch({
          id: trimmed(text.id),
          input: trimmed(text.input),
          attr: trimmed(text.attr),
          error: trimmed(text.error),
        });
      }}
    >
      {field('attr', 'Attributes', 'customer=c-42')}
      {field('error', 'Error', 'text of the error')}
      {field('id', 'Job id', 'id or its first characters')}
      {field('input', 'Input', 'key=value')}
      <button type="submit" class="button-primary" disabled={invalid}>
        Search
      </button>
      {(given.id || given.input || given.attr || given.error) && (
        <button
          type="button"
          class="button-ghost"
          onClick={() => onSearch({ id: undefined, input: undefined, attr: undefined, error: undefined })}
        >
          Clear
        </button>
      )}
      {invalid && <span class="text-failed small">A job id has only hex digits and dashes.</span>}
    </form>
  );
}

function SearchNote({
  idQuery,
  input,
  shown,
  page,
  exact,
}: {
  idQuery: IdQuery;
  input?: string;
  shown: number;
  page?: JobListPage;
  exact: boolean;
}) {
  const what = [
    idQuery.kind === 'prefix' ? `ids starting ${idQuery.prefix}` : undefined,
    input ? `input ${input}` : undefined,
  ]
    .filter(Boolean)
    .join(' and ');
  return (
    <p class="search-note muted" data-search-shown={shown}>
      {exact
        ? 'The job with this id, whatever its workflow and status.'
        : page
          ? `${plural(shown, 'job')} of the ${page.jobs.length} on this page match ${what}; Older → searches the next page.`
          : `Searching for ${what}…`}
    </p>
  );
}
