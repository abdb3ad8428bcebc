import { useState } from 'preact/hooks';
import type { WorkflowListing } from '../api-types.js';
import { plural } from '../format.js';
import { useNow, useResource } from '../hooks.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { jobStateClass } from '../status-badge.js';
import { DefinitionGraph } from './definition-graph.js';
import { ErrorNote, Loading } from './notes.js';

const COUNTED = ['running', 'paused', 'completed', 'failed', 'cancelled', 'aborted'] as const;
/** Counted only when there are some: most workflows have no delayed starts and no `maxRunning` queue. */
const COUNTED_WHEN_ANY = ['scheduled', 'queued'] as const;

/** Every registered workflow: its versions, job counts and DAG. */
export function WorkflowsView() {
  const workflows = useResource(
    (client, signal) => client.request<WorkflowListing[]>('api/workflows', { signal }),
    'workflows',
    10_000,
  );
  const now = useNow();
  return (
    <section class="view">
      <div class="view-head">
        <h1>Workflows</h1>
        {workflows.data && <p class="muted">{plural(workflows.data.length, 'workflow')} registered</p>}
      </div>
      {workflows.error && <ErrorNote error={workflows.error} onRetry={workflows.reload} />}
      {!workflows.data && !workflows.error && <Loading what="workflows" />}
      {workflows.data?.length === 0 && (
        <div class="card empty">
          <h2>No workflows yet</h2>
          <p>
            Register one with <code>switchyard serve --config workflows.yaml</code> or{' '}
            <code>switchyard push workflows.yaml</code>.
          </p>
        </div>
      )}
      <div class="workflow-list">
        {workflows.data?.map((workflow) => (
          <WorkflowCard key={`${workflow.name}|${workflow.vhost}`} workflow={workflow} now={now} />
        ))}
      </div>
    </section>
  );
}

function WorkflowCard({ workflow, now }: { workflow: WorkflowListing; now: number }) {
  const [version, setVersion] = useState(workflow.version);
  const versions = workflow.versions ?? [{ version: workflow.version, createdAt: '' }];
  const registered = versions.find((entry) => entry.version === version)?.createdAt;
  const counts = workflow.jobs ?? { running: workflow.job_count };
  return (
    <article class="card workflow-card" data-workflow={workflow.name}>
      <div class="workflow-info">
        <div class="workflow-title">
          <h2>
            <a href={routeHref({ view: 'workflow', name: workflow.name })}>{workflow.name}</a>
          </h2>
          {!workflow.enabled && <span class="tag tag-muted">disabled</span>}
          {workflow.vhost !== '/' && <span class="tag">vhost {workflow.vhost}</span>}
        </div>
        {workflow.description && <p class="workflow-description">{workflow.description}</p>}
        <ul class="counts" aria-label="Jobs by status">
          {[...COUNTED_WHEN_ANY.filter((status) => (counts[status] ?? 0) > 0), ...COUNTED].map((status) => (
            <li key={status}>
              <a
                class={`count ${jobStateClass(status)}`}
                href={routeHref({ view: 'jobs', workflow: workflow.name, status })}
                data-count={status}
              >
                <strong>{(counts[status] ?? 0).toLocaleString('en-US')}</strong> {status}
              </a>
            </li>
          ))}
        </ul>
        <div class="workflow-version">
          <span class="version-label">Version</span>
          {versions.length > 1 ? (
            <select
              aria-label={`Version of ${workflow.name}`}
              value={version}
              onChange={(event) => setVersion(Number((event.target as HTMLSelectElement).value))}
            >
              {[...versions].reverse().map((entry) => (
                <option key={entry.version} value={entry.version}>
                  {entry.version}
                  {entry.version === workflow.version ? ' (latest)' : ''}
                </option>
              ))}
            </select>
          ) : (
            <strong>{version}</strong>
          )}
          {registered && (
            <span class="muted">
              registered <RelativeTime iso={registered} now={now} />
            </span>
          )}
        </div>
        <a class="link-arrow" href={routeHref({ view: 'jobs', workflow: workflow.name, status: 'all' })}>
          All jobs of {workflow.name} →
        </a>
      </div>
      <div class="workflow-graph">
        <DefinitionGraph name={workflow.name} version={version} />
      </div>
    </article>
  );
}
