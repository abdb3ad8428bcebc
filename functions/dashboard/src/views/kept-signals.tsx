import type { JobDocument } from '../api-types.js';
import { absoluteTime } from '../format.js';
import { RelativeTime } from '../relative-time.js';
import { routeHref } from '../route.js';

/**
 * Signals that came before their step waited for them: the job keeps them and hands each to its
 * step when it waits (docs/workflows.md, "Signals that come early"). A line per signal.
 */
export function KeptSignals({ job, now }: { job: JobDocument; now: number }) {
  const kept = job.pendingSignals ?? [];
  if (!kept.length) return null;
  return (
    <div class="note note-kept-signals" role="status" data-kept-signals={kept.length}>
      <strong>
        {kept.length === 1
          ? 'A signal is kept until its step waits'
          : `${kept.length} signals are kept until their steps wait`}
      </strong>
      <ul class="wait-list">
        {kept.map((signal) => (
          <li key={signal.step} data-kept-signal={signal.step}>
            {/* A path (`publish/approve`) is kept by its first step, a workflow: step not started yet. */}
            <a href={routeHref({ view: 'job', id: job.uuid, step: signal.step.split('/')[0] })} class="mono">
              {signal.step}
            </a>
            <span class="muted" title={absoluteTime(signal.at)}>
              {' '}
              (came <RelativeTime iso={signal.at} now={now} />)
            </span>{' '}
            <code class="kept-signal-body">{JSON.stringify(signal.body)}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}
