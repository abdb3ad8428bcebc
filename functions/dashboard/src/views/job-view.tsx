import { useMemo, useState } from 'preact/hooks';
import { jobClock } from '../../../api/job-clock.js';
import type { JobDocument, StepStatus, WorkflowDefinition } from '../api-types.js';
import { clockFacts } from '../clock-text.js';
import { fetchDefinition } from '../definitions.js';
import { absoluteTime, lastChange, shortId } from '../format.js';
import { layoutGraph } from '../graph-layout.js';
import { jobGraph, jobSteps } from '../graph-model.js';
import { GraphView } from '../graph-view.js';
import { signalsTo, useJobHistory } from '../history-entries.js';
import { useAction, useApi, useNow, useResource } from '../hooks.js';
import { JsonView } from '../json-view.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { StatusBadge } from '../status-badge.js';
import { defaultStep, stepNote } from '../step-note.js';
import { DeliveriesView } from './deliveries-view.js';
import { HistoryView } from './history-view.js';
import { JobLinks } from './job-links.js';
import { KeptSignals } from './kept-signals.js';
import { type LiveState, useLiveJob } from './live-job.js';
import { ErrorNote, Loading } from './notes.js';
import { QueueNote } from './queue-note.js';
import { canRerun, RerunForm } from './rerun-form.js';
import { StepPanel } from './step-panel.js';
import { TimelineView } from './timeline-view.js';
import { WaitingNote } from './waiting-note.js';

/** One job: its DAG coloured by state, followed live, with the selected step's details below. */
export function JobView({ id, step }: { id: string; step?: string }) {
  const live = useLiveJob(id);
  const job = live.job;
  const definition = useResource(
    (client) => (job ? fetchDefinition(client, job.workflow, job.version) : Promise.resolve(undefined)),
    job ? `${job.workflow}@${job.version}` : '',
  );
  if (live.error && !job) {
    return (
      <section class="view">
        <Breadcrumbs id={id} />
        <ErrorNote error={live.error} />
      </section>
    );
  }
  if (!job) {
    return (
      <section class="view">
        <Breadcrumbs id={id} />
        <Loading what="the job" />
      </section>
    );
  }
  return (
    <section class="view job-view" data-job={job.uuid} data-job-status={job.status}>
      <Breadcrumbs id={id} job={job} />
      <JobHeader
        job={job}
        step={step && job.steps[step] ? step : defaultStep(job)}
        live={live.live}
        changedAt={live.changedAt}
        onJob={live.replace}
      />
      {definition.error && <ErrorNote error={definition.error} onRetry={definition.reload} />}
      <JobBody
        job={job}
        // Without its definition the steps are still drawn, unconnected.
        workflow={
          definition.data?.definition ?? (definition.error ? { name: job.workflow, steps: [] } : undefined)
        }
        step={step}
        onJob={live.replace}
      />
    </section>
  );
}

function Breadcrumbs({ id, job }: { id: string; job?: JobDocument }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumbs">
      <a href={routeHref({ view: 'jobs', status: 'all' })}>Jobs</a>
      {job && (
        <>
          <span aria-hidden="true">/</span>
          <a href={routeHref({ view: 'jobs', status: 'all', workflow: job.workflow })}>{job.workflow}</a>
        </>
      )}
      {job?.parent && (
        <>
          <span aria-hidden="true">/</span>
          <a href={routeHref({ view: 'job', id: job.parent })} class="mono">
            {shortId(job.parent)}
          </a>
        </>
      )}
      <span aria-hidden="true">/</span>
      <span class="mono" aria-current="page">
        {shortId(id)}
      </span>
    </nav>
  );
}

const LIVE_LABELS: Record<LiveState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  finished: '',
};

function JobHeader({
  job,
  step,
  live,
  changedAt,
  onJob,
}: {
  job: JobDocument;
  /** The step the page shows: where a rerun starts unless another is chosen. */
  step?: string;
  live: LiveState;
  changedAt?: number;
  onJob(job: JobDocument): void;
}) {
  const client = useApi();
  const action = useAction();
  const now = useNow(1000);
  const [confirming, setConfirming] = useState(false);
  const [rerunning, setRerunning] = useState(false);
  const active =
    job.status === 'scheduled' ||
    job.status === 'pending' ||
    job.status === 'running' ||
    job.status === 'waiting' ||
    job.status === 'queued' ||
    job.status === 'paused';
  const cancel = () =>
    action.run(async () => {
      onJob(await client.request<JobDocument>(`api/job/${job.uuid}`, { method: 'DELETE' }));
      setConfirming(false);
    });
  const retry = () =>
    action.run(async () => {
      onJob(await client.request<JobDocument>(`api/job/${job.uuid}/retry`, { method: 'POST' }));
    });
  // A child's pause or resume acts on the job it belongs to: the page shows what the API answers.
  const pauseOrResume = (verb: 'pause' | 'resume') =>
    action.run(async () => {
      onJob(await client.request<JobDocument>(`api/job/${job.uuid}/${verb}`, { method: 'POST' }));
    });
  return (
    <div class="card job-header">
      <div class="job-title">
        <StatusBadge status={job.status} large job />
        <h1>
          <a class="job-workflow" href={routeHref({ view: 'workflow', name: job.workflow })}>
            {job.workflow}
          </a>
          <span class="muted job-version"> v{job.version}</span>
        </h1>
        {job.status === 'queued' && job.queuePosition !== undefined && (
          <span
            class="muted"
            data-queue-position={job.queuePosition}
            title="Waits for one of its workflow's running jobs to end (maxRunning)"
          >
            number {job.queuePosition} in the queue
          </span>
        )}
        {live !== 'finished' && (
          <span class={`live live-${live}`} data-live={live}>
            <span class="live-dot" aria-hidden="true" />
            {LIVE_LABELS[live]}
          </span>
        )}
        <div class="job-actions">
          {(job.status === 'running' || job.status === 'waiting') && !confirming && (
            <button
              type="button"
              class="button-ghost"
              onClick={() => pauseOrResume('pause')}
              disabled={action.busy}
              title={job.parent ? 'Pauses the job this one belongs to, and all its children' : undefined}
            >
              Pause job
            </button>
          )}
          {job.status === 'paused' && !confirming && (
            <button
              type="button"
              class="button-primary"
              onClick={() => pauseOrResume('resume')}
              disabled={action.busy}
            >
              Resume job
            </button>
          )}
          {active && !confirming && (
            <button
              type="button"
              class="button-danger"
              onClick={() => setConfirming(true)}
              disabled={action.busy}
            >
              Cancel job
            </button>
          )}
          {active && confirming && (
            <span class="confirm">
              <span>Cancel this job{job.parent ? ' and the job it belongs to' : ''}?</span>
              <button type="button" class="button-danger" onClick={cancel} disabled={action.busy}>
                {action.busy ? 'Cancelling…' : 'Yes, cancel'}
              </button>
              <button type="button" class="button-ghost" onClick={() => setConfirming(false)}>
                Keep running
              </button>
            </span>
          )}
          {(job.status === 'failed' || job.status === 'cancelled' || job.status === 'aborted') &&
            !job.parent && (
              <button type="button" class="button-primary" onClick={retry} disabled={action.busy}>
                {action.busy ? 'Retrying…' : 'Retry job'}
              </button>
            )}
          {canRerun(job) && !rerunning && (
            <button type="button" class="button-ghost" onClick={() => setRerunning(true)}>
              Rerun…
            </button>
          )}
        </div>
      </div>
      {rerunning && canRerun(job) && (
        <RerunForm job={job} step={step} onJob={onJob} onClose={() => setRerunning(false)} />
      )}
      <dl class="facts job-facts">
        <div class="fact">
          <dt>Job</dt>
          <dd class="mono job-id">{job.uuid}</dd>
        </div>
        {job.parent && (
          <div class="fact">
            <dt>Child of</dt>
            <dd>
              <a class="mono" href={routeHref({ view: 'job', id: job.parent })}>
                {shortId(job.parent)}
              </a>{' '}
              <span class="muted">(item #{job.index})</span>
            </dd>
          </div>
        )}
        <JobLinks job={job} />
        {job.startAt && (
          <div class="fact">
            <dt>{job.status === 'scheduled' ? 'Starts' : 'Scheduled for'}</dt>
            <dd class="job-start-at">
              <RelativeTime iso={job.startAt} now={now} />
            </dd>
          </div>
        )}
        <div class="fact">
          <dt>Created</dt>
          <dd>
            <RelativeTime iso={job.createdAt} now={now} />
          </dd>
        </div>
        {/* The run began later than its creation: after a delayed start, or a wait in the queue. */}
        {job.startedAt && Date.parse(job.startedAt) - Date.parse(job.createdAt) >= 1000 && (
          <div class="fact">
            <dt>Started</dt>
            <dd>
              <RelativeTime iso={job.startedAt} now={now} />
            </dd>
          </div>
        )}
        {clockFacts(jobClock(job), now).map((fact) => (
          <div class="fact" key={fact.name} data-clock-fact={fact.name}>
            <dt>{fact.name}</dt>
            <dd>{fact.value}</dd>
          </div>
        ))}
        <div class="fact">
          <dt>Updated</dt>
          <dd class="job-updated">
            <RelativeTime iso={lastChange(job.updatedAt, changedAt)} now={now} />
          </dd>
        </div>
      </dl>
      {action.error && <ErrorNote error={action.error} onRetry={action.clear} />}
      <WaitingNote job={job} now={now} />
      <KeptSignals job={job} now={now} />
      {job.error && (
        <div class="note note-error job-error" role="alert">
          <div>
            <strong>
              {job.status === 'aborted'
                ? job.error.step
                  ? `Step ${job.error.step}'s worker aborted the job`
                  : 'The job was aborted'
                : job.error.step
                  ? `Step ${job.error.step} failed`
                  : 'The job failed'}
              {job.error.attempt > 1 ? ` after ${job.error.attempt} attempts` : ''}
            </strong>{' '}
            <span class="muted" title={absoluteTime(job.error.at)}>
              <RelativeTime iso={job.error.at} now={now} />
            </span>
          </div>
          <pre>{job.error.message}</pre>
        </div>
      )}
    </div>
  );
}

function JobBody({
  job,
  workflow,
  step,
  onJob,
}: {
  job: JobDocument;
  workflow?: WorkflowDefinition;
  step?: string;
  onJob(job: JobDocument): void;
}) {
  const now = useNow(1000);
  const history = useJobHistory(job);
  const selected = step && job.steps[step] ? step : defaultStep(job);
  const layout = useMemo(() => workflow && layoutGraph(jobGraph(workflow, job)), [workflow, job]);
  const steps = workflow ? jobSteps(workflow, job).steps : [];
  const order = steps.map((candidate) => candidate.name);
  return (
    <>
      {workflow && <QueueNote job={job} steps={steps} tasks={workflow.tasks ?? []} now={now} />}
      <div class="card graph-card">
        <div class="graph-head">
          <h2>Steps</h2>
          <Legend job={job} />
        </div>
        {layout ? (
          <GraphView
            layout={layout}
            title={`The steps of job ${job.uuid}, coloured by state`}
            selected={selected ? `step:${selected}` : undefined}
            hrefFor={(node) => routeHref({ view: 'job', id: job.uuid, step: node.step })}
            noteFor={(node) =>
              stepNote(
                job.steps[node.step],
                now,
                node,
                job.waitingFor?.find((wait) => wait.step === node.step),
              )
            }
            jobHref={(called) => routeHref({ view: 'job', id: called })}
          />
        ) : (
          <Loading what="the graph" />
        )}
      </div>
      <section class="card timeline-card" aria-label="Timeline">
        <div class="graph-head">
          <h2>Timeline</h2>
          <p class="muted small">
            From the job's start; each step from its first attempt's sending to its end, attempts as segments,
            gaps as waits for a retry.
          </p>
        </div>
        <TimelineView job={job} order={order} now={now} selected={selected} />
      </section>
      <div class="job-columns">
        {selected && (
          <StepPanel
            job={job}
            step={selected}
            definition={steps.find((candidate) => candidate.name === selected)}
            tasks={workflow?.tasks ?? []}
            signals={signalsTo(history.data?.events, selected)}
            now={now}
            onJob={onJob}
          />
        )}
        <section class="card job-data" aria-label="Job input and result">
          <h2>Job input</h2>
          <JsonView value={job.input} label="Job input" />
          <h2>Result</h2>
          {job.result !== undefined ? (
            <JsonView value={job.result} label="Job result" />
          ) : (
            <p class="muted">
              {job.status === 'running' || job.status === 'waiting'
                ? 'Known once the job completes.'
                : 'No result.'}
            </p>
          )}
        </section>
      </div>
      <HistoryView history={history} />
      <DeliveriesView job={job} />
    </>
  );
}

/** The states' colours; skipped steps, handled failures and waits only for a job that has them. */
function Legend({ job }: { job: JobDocument }) {
  const views = Object.values(job.steps);
  const has = (status: StepStatus) => views.some((view) => view.status === status);
  const states = [
    'waiting',
    'running',
    ...(has('suspended') || job.waitingFor?.length ? (['suspended'] as const) : []),
    'completed',
    ...(has('skipped') ? (['skipped'] as const) : []),
    'failed',
    ...(views.some((view) => view.handled) ? (['handled'] as const) : []),
    'cancelled',
  ] as const;
  const names: Partial<Record<(typeof states)[number], string>> = {
    handled: 'failed · handled',
    suspended: 'waiting for someone',
  };
  return (
    <ul class="legend" aria-label="Step states">
      {states.map((state) => (
        <li key={state} class={`state-${state}`}>
          <span class="legend-swatch" aria-hidden="true" />
          {names[state] ?? state}
        </li>
      ))}
    </ul>
  );
}
