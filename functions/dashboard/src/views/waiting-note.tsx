import type { JobDocument, WaitView } from '../api-types.js';
import { absoluteTime, shortId } from '../format.js';
import { useAction, useApi } from '../hooks.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';
import { ErrorNote } from './notes.js';

/**
 * The steps of a job that wait for someone, at the top of its page: what each waits for, since when,
 * and what lets it go on: its step's signal form (a signal step, a suspended step), or resuming the
 * paused job a call waits for.
 */
export function WaitingNote({ job, now }: { job: JobDocument; now: number }) {
  const waits = job.waitingFor ?? [];
  if (!waits.length) return null;
  return (
    <div class="note note-waiting" role="status" data-waiting={waits.length}>
      <strong>
        {waits.length === 1 ? 'A step waits for someone' : `${waits.length} steps wait for someone`}
      </strong>
      <ul class="wait-list">
        {waits.map((wait) => (
          <WaitItem key={wait.step} job={job} wait={wait} now={now} />
        ))}
      </ul>
    </div>
  );
}

function WaitItem({ job, wait, now }: { job: JobDocument; wait: WaitView; now: number }) {
  const client = useApi();
  const action = useAction();
  const since = (
    <span class="muted" title={absoluteTime(wait.since)}>
      {' '}
      (<RelativeTime iso={wait.since} now={now} />)
    </span>
  );
  const stepLink = (
    <a href={routeHref({ view: 'job', id: job.uuid, step: wait.step })} class="mono">
      {wait.step}
    </a>
  );
  if (wait.kind === 'paused-call') {
    const called = wait.job as string;
    const resume = () =>
      action.run(async () => {
        await client.request(`api/job/${called}/resume`, { method: 'POST' });
      });
    return (
      <li data-wait={wait.kind} data-wait-step={wait.step}>
        {stepLink} waits for job{' '}
        <a class="mono" href={routeHref({ view: 'job', id: called })}>
          {shortId(called)}
        </a>
        , which is paused{since}
        <button type="button" class="button-primary button-small" onClick={resume} disabled={action.busy}>
          {action.busy ? 'Resuming…' : 'Resume that job'}
        </button>
        {action.error && <ErrorNote error={action.error} onRetry={action.clear} />}
      </li>
    );
  }
  return (
    <li data-wait={wait.kind} data-wait-step={wait.step}>
      {stepLink}{' '}
      {wait.kind === 'signal' ? (
        'waits for its signal'
      ) : (
        <>
          was suspended by its worker{wait.note ? ': ' : ''}
          {wait.note && <q class="wait-quote">{wait.note}</q>}
        </>
      )}
      {since}{' '}
      <a class="link-arrow" href={routeHref({ view: 'job', id: job.uuid, step: wait.step })}>
        Send the signal →
      </a>
    </li>
  );
}
