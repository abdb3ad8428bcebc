import { DEFAULT_NAMESPACE } from '../../engine/index.js';
import type { JobClock } from '../api/job-clock.js';
import type { WaitView } from '../api/job-document.js';
import { humanDuration } from './terminal.js';

/**
 * What `status`, `watch` and `jobs` say of steps that wait for someone (the job document's
 * `waitingFor`), and the command that lets each go on. Names are letters, digits, `_` and `-`
 * (NAME_PATTERN): a command line needs no quoting for them.
 */

/** `switchyard signal ID STEP --input '{}'`, or `switchyard resume CALLED` for a paused call. */
export function unblockCommand(jobId: string, wait: WaitView, namespace = DEFAULT_NAMESPACE): string {
  const scope = namespace === DEFAULT_NAMESPACE ? '' : ` --namespace ${namespace}`;
  if (wait.kind === 'paused-call') return `switchyard resume ${wait.job}${scope}`;
  return `switchyard signal ${jobId} ${wait.step} --input '{}'${scope}`;
}

/** `suspended 9m 48s: waiting for finance`, `waiting for its signal 3.0s`, `its job 1a2b3c4d is paused 2m 00s`. */
export function describeWait(wait: WaitView, now: number): string {
  const since = humanDuration(Math.max(0, now - Date.parse(wait.since)));
  switch (wait.kind) {
    case 'signal':
      return `waiting for its signal ${since}`;
    case 'suspended':
      return `suspended ${since}${wait.note ? `: ${wait.note}` : ''}`;
    case 'paused-call':
      return `its job ${wait.job?.slice(0, 8)} is paused ${since}`;
  }
}

/** A list's cell: `signal approve`, `suspended check: waiting for finance`, `paused call pay`. */
export function waitCell(waits: readonly WaitView[]): string {
  const [first, ...more] = waits;
  if (!first) return '';
  const what =
    first.kind === 'signal'
      ? `signal ${first.step}`
      : first.kind === 'suspended'
        ? `suspended ${first.step}${first.note ? `: ${first.note}` : ''}`
        : `paused call ${first.step}`;
  return more.length ? `${what} (+${more.length})` : what;
}

/** The clock of a job as a few words: `starts in 4m 00s`, `queued 3.0s`, `paused 5m 00s (ran 12.0s)`, `1.2s`. */
export function clockText(clock: JobClock, now: number): string {
  const since = (at: number) => humanDuration(Math.max(0, now - at));
  switch (clock.phase) {
    case 'scheduled':
      return `starts in ${humanDuration(Math.max(0, clock.startsAt - now))}`;
    case 'queued':
      return `queued ${since(clock.since)}`;
    case 'pending':
      return `pending ${since(clock.since)}`;
    case 'running':
      return `running ${since(clock.since)}`;
    case 'paused':
      return `paused ${since(clock.since)}${clock.ranMs !== undefined ? ` (ran ${humanDuration(Math.max(0, clock.ranMs))})` : ''}`;
    case 'ended':
      return clock.tookMs === undefined ? 'never ran' : humanDuration(clock.tookMs);
  }
}
