import { useMemo, useState } from 'preact/hooks';
import { ApiRequestError } from '../api-client.js';
import {
  JOB_FILTERS,
  type JobFilter,
  type JobListPage,
  type JobStatus,
  type WorkflowDefinitionDocument,
  type WorkflowListing,
} from '../api-types.js';
import { fetchDefinition } from '../definitions.js';
import { absoluteTime, plural } from '../format.js';
import { useAction, useApi, useNow, useResource } from '../hooks.js';
import { parseJobInput } from '../job-input.js';
import { definitionText, diffHunks, diffStats, lineDiff } from '../line-diff.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { jobStateClass } from '../status-badge.js';
import { DefinitionGraph } from './definition-graph.js';
import { JobRow, JobTableHead } from './job-row.js';
import { ErrorNote, Loading } from './notes.js';
import { QueuesPanel } from './queues-panel.js';
import { SchedulesPanel } from './schedules-panel.js';

/** The statuses counted on the page: the jobs list's filters but "all". */
const COUNTED = JOB_FILTERS.filter((filter): filter is Exclude<JobFilter, 'all'> => filter !== 'all');
/** Queued jobs shown on the workflow page, first to start first. */
const QUEUED_SHOWN = 100;
const RECENT = 10;

/**
 * One workflow: its jobs by status, its graph (any version), a form that starts a job (now or at a
 * time), its schedules and scheduled jobs, its recent jobs, and its versions with a line diff
 * between any two.
 */
export function WorkflowView({ name }: { name: string }) {
  const latest = useResource(
    (client, signal) =>
      client.request<WorkflowDefinitionDocument>(`api/workflow/${encodeURIComponent(name)}/definition`, {
        signal,
      }),
    `definition:${name}`,
    15_000,
  );
  const listing = useResource(
    (client, signal) => client.request<WorkflowListing[]>('api/workflows', { signal }),
    'workflows',
    10_000,
  );
  const recent = useResource(
    (client, signal) =>
      client.request<JobListPage>(
        `api/jobs?${new URLSearchParams({ workflow: name, status: 'all', detail: '1', limit: String(RECENT) })}`,
        { signal },
      ),
    `recent:${name}`,
    5000,
  );
  const now = useNow();
  const [version, setVersion] = useState<number>();
  /** Jobs started from the form: each reloads what shows them (the counts, the schedules). */
  const [startedHere, setStartedHere] = useState(0);
  const onStarted = () => {
    recent.reload();
    listing.reload();
    setStartedHere((n) => n + 1);
  };

  if (latest.error && !latest.data) {
    const missing = latest.error instanceof ApiRequestError && latest.error.status === 404;
    return (
      <section class="view">
        <Breadcrumbs name={name} />
        {missing ? (
          <div class="card empty">
            <h1>No workflow {name}</h1>
            <p>
              It is not registered. See the <a href="#/">workflows</a> that are.
            </p>
          </div>
        ) : (
          <ErrorNote error={latest.error} onRetry={latest.reload} />
        )}
      </section>
    );
  }
  if (!latest.data) {
    return (
      <section class="view">
        <Breadcrumbs name={name} />
        <Loading what={`the workflow ${name}`} />
      </section>
    );
  }
  const document = latest.data;
  const entry =
    listing.data?.find((candidate) => candidate.name === name && candidate.vhost === '/') ??
    listing.data?.find((candidate) => candidate.name === name);
  const shown = version ?? document.version;
  const counts: Partial<Record<JobStatus, number>> = entry?.jobs ?? {};
  return (
    <section class="view workflow-view" data-workflow={name}>
      <Breadcrumbs name={name} />
      <div class="card workflow-head">
        <div class="workflow-title">
          <h1>{name}</h1>
          <span class="muted">v{document.version}</span>
          {!document.enabled && (
            <span class="tag tag-muted" title="New jobs are refused until it is registered again">
              disabled
            </span>
          )}
        </div>
        {document.definition.description && (
          <p class="workflow-description">{document.definition.description}</p>
        )}
        {document.definition.maxRunning !== undefined && (
          <p class="muted" data-max-running={document.definition.maxRunning}>
            Runs at most {plural(document.definition.maxRunning, 'job')} at once; more wait as queued, in the
            order they were started.
          </p>
        )}
        <ul class="counts counts-row" aria-label="Jobs by status">
          {COUNTED.filter(
            // Queued jobs exist only under a limit (or just after one was removed).
            (status) => status !== 'queued' || document.definition.maxRunning !== undefined || counts.queued,
          ).map((status) => (
            <li key={status}>
              <a
                class={`count ${jobStateClass(status)}`}
                href={routeHref({ view: 'jobs', workflow: name, status })}
                data-count={status}
              >
                <strong>{(counts[status] ?? 0).toLocaleString('en-US')}</strong> {status}
              </a>
            </li>
          ))}
        </ul>
        <a class="link-arrow" href={routeHref({ view: 'jobs', workflow: name, status: 'all' })}>
          All jobs of {name} →
        </a>
      </div>
      <div class="workflow-columns">
        <div class="card graph-card">
          <div class="graph-head">
            <h2>Steps</h2>
            <label class="version-pick">
              <span>Version</span>
              <select
                aria-label="Version drawn"
                value={shown}
                onChange={(event) => setVersion(Number((event.target as HTMLSelectElement).value))}
              >
                {[...document.versions].reverse().map((entry) => (
                  <option key={entry.version} value={entry.version}>
                    {entry.version}
                    {entry.version === document.version ? ' (latest)' : ''}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <DefinitionGraph name={name} version={shown} />
        </div>
        <StartJobForm
          name={name}
          latest={document.version}
          versions={document.versions}
          enabled={document.enabled}
          onStarted={onStarted}
        />
      </div>
      {(counts.queued ?? 0) > 0 && <QueuedJobs name={name} now={now} startedHere={startedHere} />}
      <SchedulesPanel workflow={name} now={now} startedHere={startedHere} />
      <section class="card table-card recent-jobs" aria-label="Recent jobs">
        <div class="card-head">
          <h2>Recent jobs</h2>
          <a href={routeHref({ view: 'jobs', workflow: name, status: 'all' })}>All jobs →</a>
        </div>
        {recent.error && <ErrorNote error={recent.error} onRetry={recent.reload} />}
        {!recent.data && !recent.error && <Loading what="jobs" />}
        {recent.data &&
          (recent.data.jobs.length === 0 ? (
            <p class="empty-row">No jobs yet: start one above.</p>
          ) : (
            <table class="jobs-table">
              <JobTableHead workflow={false} />
              <tbody>
                {recent.data.jobs.map((job) => (
                  <JobRow key={job.uuid} job={job} now={now} workflow={false} />
                ))}
              </tbody>
            </table>
          ))}
      </section>
      <QueuesPanel workflow={name} />
      <Versions name={name} document={document} now={now} />
    </section>
  );
}

/**
 * The workflow's queued jobs (maxRunning), first to start first; read again at once when the form
 * starts a job (`startedHere`), which may join the queue.
 */
function QueuedJobs({ name, now, startedHere }: { name: string; now: number; startedHere: number }) {
  const queued = useResource(
    async (client, signal) => {
      const path = `api/workflow/${encodeURIComponent(name)}`;
      const { queued: order } = await client.request<{ queued?: string[] }>(path, { signal });
      const query = new URLSearchParams({ workflow: name, status: 'queued', detail: '1', limit: '1000' });
      const page = await client.request<JobListPage>(`api/jobs?${query}`, { signal });
      const byId = new Map(page.jobs.map((job) => [job.uuid, job]));
      return (order ?? []).flatMap((id) => byId.get(id) ?? []).slice(0, QUEUED_SHOWN);
    },
    `queued:${name}`,
    5000,
    startedHere,
  );
  return (
    <section class="card table-card queued-jobs" aria-label="Queued jobs">
      <div class="card-head">
        <h2>Queued jobs</h2>
        <a href={routeHref({ view: 'jobs', workflow: name, status: 'queued' })}>All queued →</a>
      </div>
      {queued.error && <ErrorNote error={queued.error} onRetry={queued.reload} />}
      {!queued.data && !queued.error && <Loading what="queued jobs" />}
      {queued.data && (
        <table class="jobs-table">
          <JobTableHead workflow={false} />
          <tbody>
            {queued.data.map((job) => (
              <JobRow key={job.uuid} job={job} now={now} workflow={false} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Breadcrumbs({ name }: { name: string }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumbs">
      <a href="#/">Workflows</a>
      <span aria-hidden="true">/</span>
      <span aria-current="page">{name}</span>
    </nav>
  );
}

function StartJobForm({
  name,
  latest,
  versions,
  enabled,
  onStarted,
}: {
  name: string;
  latest: number;
  versions: { version: number }[];
  enabled: boolean;
  onStarted(): void;
}) {
  const client = useApi();
  const action = useAction();
  const [text, setText] = useState('{\n  \n}');
  const [version, setVersion] = useState<number>();
  const [started, setStarted] = useState<string>();
  /** `datetime-local` value: the job is scheduled for then (the browser's time zone), or starts now. */
  const [startAt, setStartAt] = useState('');
  const verdict = parseJobInput(text);
  const start = () =>
    action.run(async () => {
      if (!('input' in verdict)) return;
      setStarted(undefined);
      const params = new URLSearchParams();
      if (version && version !== latest) params.set('version', String(version));
      if (startAt) params.set('at', new Date(startAt).toISOString());
      const query = params.size ? `?${params}` : '';
      const answer = await client.request<{ id: string }>(
        `api/workflow/${encodeURIComponent(name)}${query}`,
        {
          method: 'POST',
          body: verdict.input,
        },
      );
      setStarted(answer.id);
      onStarted();
    });
  return (
    <form
      class="card start-job"
      aria-label={`Start a job of ${name}`}
      onSubmit={(event) => {
        event.preventDefault();
        void start();
      }}
    >
      <h2>Start a job</h2>
      <p class="muted">
        Its input, a JSON object. An <code>id</code> key names the job (a UUID); the same id and input again
        starts nothing new.
      </p>
      <textarea
        class="mono"
        name="input"
        rows={8}
        spellcheck={false}
        aria-label="Job input (JSON)"
        aria-invalid={'error' in verdict ? 'true' : undefined}
        value={text}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
      />
      <p
        class={`input-verdict ${'error' in verdict ? 'text-failed' : 'text-ok'}`}
        data-valid={'input' in verdict}
      >
        {'error' in verdict
          ? verdict.error
          : `A JSON object with ${plural(Object.keys(verdict.input).length, 'key')}.`}
      </p>
      <div class="start-row">
        {versions.length > 1 && (
          <label class="version-pick">
            <span>Version</span>
            <select
              value={version ?? latest}
              onChange={(event) => setVersion(Number((event.target as HTMLSelectElement).value))}
            >
              {[...versions].reverse().map((entry) => (
                <option key={entry.version} value={entry.version}>
                  {entry.version}
                  {entry.version === latest ? ' (latest)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="version-pick">
          <span>Start at</span>
          <input
            type="datetime-local"
            name="at"
            aria-label="Start at (local time; empty: now)"
            value={startAt}
            onInput={(event) => setStartAt((event.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="button-primary" disabled={action.busy || 'error' in verdict || !enabled}>
          {action.busy ? 'Starting…' : startAt ? 'Schedule job' : 'Start job'}
        </button>
      </div>
      {!enabled && <p class="muted">The workflow is disabled: it takes no new jobs.</p>}
      {action.error && <ErrorNote error={action.error} />}
      {started && (
        <p class="note started-job" role="status">
          {startAt ? 'Scheduled' : 'Started'} job{' '}
          <a class="mono" href={routeHref({ view: 'job', id: started })} data-started-job={started}>
            {started}
          </a>
        </p>
      )}
    </form>
  );
}

/** Every version with when it was registered, and the line diff of two chosen ones. */
function Versions({
  name,
  document,
  now,
}: {
  name: string;
  document: WorkflowDefinitionDocument;
  now: number;
}) {
  const versions = document.versions;
  const [to, setTo] = useState(document.version);
  const [from, setFrom] = useState(() => versions[versions.length - 2]?.version ?? document.version);
  return (
    <section class="card versions" aria-label="Versions">
      <h2>Versions</h2>
      <ul class="version-list">
        {[...versions].reverse().map((entry) => (
          <li key={entry.version} data-version={entry.version}>
            <strong>v{entry.version}</strong>
            {entry.version === document.version && <span class="tag">latest</span>}
            <span class="muted" title={absoluteTime(entry.createdAt)}>
              registered <RelativeTime iso={entry.createdAt} now={now} />
            </span>
          </li>
        ))}
      </ul>
      {versions.length < 2 ? (
        <p class="muted">One version so far: nothing to compare.</p>
      ) : (
        <>
          <div class="diff-pick">
            <VersionSelect label="Compare" name="from" versions={versions} value={from} onChange={setFrom} />
            <VersionSelect label="with" name="to" versions={versions} value={to} onChange={setTo} />
          </div>
          <VersionDiff name={name} from={from} to={to} />
        </>
      )}
    </section>
  );
}

function VersionDiff({ name, from, to }: { name: string; from: number; to: number }) {
  const pair = useResource(
    (client) => Promise.all([fetchDefinition(client, name, from), fetchDefinition(client, name, to)]),
    `${name}@${from}..${to}`,
  );
  const lines = useMemo(
    () =>
      pair.data && lineDiff(definitionText(pair.data[0].definition), definitionText(pair.data[1].definition)),
    [pair.data],
  );
  if (pair.error) return <ErrorNote error={pair.error} onRetry={pair.reload} />;
  if (!lines || pair.data?.[0].version !== from || pair.data?.[1].version !== to) {
    return <Loading what="the two versions" />;
  }
  const stats = diffStats(lines);
  const hunks = diffHunks(lines);
  return (
    <div class="diff" data-diff={`${from}..${to}`} data-added={stats.added} data-removed={stats.removed}>
      <p class="diff-stats">
        <span class="diff-added-count">+{stats.added}</span>{' '}
        <span class="diff-removed-count">−{stats.removed}</span>{' '}
        <span class="muted">
          lines of the definition (JSON) from v{from} to v{to}
          {from === to ? ': the same version' : ''}
        </span>
      </p>
      {hunks.length === 0 ? (
        <p class="muted">No difference.</p>
      ) : (
        <div class="diff-body mono" title={`Changes from v${from} to v${to}`}>
          {hunks.map((hunk, index) => (
            <div class="diff-hunk" key={index}>
              {hunk.skipped > 0 && <div class="diff-skip">⋯ {plural(hunk.skipped, 'unchanged line')}</div>}
              {hunk.lines.map((line, lineIndex) => (
                <div class={`diff-line diff-${line.kind}`} key={lineIndex}>
                  <span class="diff-no">{line.oldLine ?? ''}</span>
                  <span class="diff-no">{line.newLine ?? ''}</span>
                  <span class="diff-mark">
                    {line.kind === 'added' ? '+' : line.kind === 'removed' ? '−' : ' '}
                  </span>
                  <span class="diff-text">{line.text}</span>
                </div>
              ))}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

/** A labelled pick among a workflow's versions, newest first. */
function VersionSelect({
  label,
  name,
  versions,
  value,
  onChange,
}: {
  label: string;
  name: string;
  versions: readonly { version: number }[];
  value: number;
  onChange: (version: number) => void;
}) {
  return (
    <label>
      <span>{label}</span>
      <select
        name={name}
        value={value}
        onChange={(event) => onChange(Number((event.target as HTMLSelectElement).value))}
      >
        {[...versions].reverse().map((entry) => (
          <option key={entry.version} value={entry.version}>
            v{entry.version}
          </option>
        ))}
      </select>
    </label>
  );
}
