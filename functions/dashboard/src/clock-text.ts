import type { JobClock } from '../../api/job-clock.js';
import { formatDuration } from './format.js';

/** Pure: a job's clock (functions/api/job-clock.ts) in the dashboard's words. */

const span = (ms: number) => formatDuration(Math.max(0, ms));

/** The header's facts: `Starts in` for a scheduled job, `Queued for`, `Running for`, `Paused for` and `Ran for`, `Took`. */
export function clockFacts(clock: JobClock, now: number): { name: string; value: string }[] {
  switch (clock.phase) {
    case 'scheduled':
      return [{ name: 'Starts in', value: span(clock.startsAt - now) }];
    case 'queued':
      return [{ name: 'Queued for', value: span(now - clock.since) }];
    case 'pending':
      return [{ name: 'Pending for', value: span(now - clock.since) }];
    case 'running':
      return [{ name: 'Running for', value: span(now - clock.since) }];
    case 'paused':
      return [
        { name: 'Paused for', value: span(now - clock.since) },
        ...(clock.ranMs === undefined ? [] : [{ name: 'Ran for', value: span(clock.ranMs) }]),
      ];
    case 'ended':
      return [{ name: 'Took', value: clock.tookMs === undefined ? 'never ran' : span(clock.tookMs) }];
  }
}

/** A list's cell: `starts in 4 min 00 s`, `queued 3.0 s`, `running 12.0 s`, `paused 5 min 00 s`, `1.2 s`, `never ran`. */
export function clockCell(clock: JobClock, now: number): string {
  switch (clock.phase) {
    case 'scheduled':
      return `starts in ${span(clock.startsAt - now)}`;
    case 'queued':
    case 'pending':
    case 'running':
    case 'paused':
      return `${clock.phase} ${span(now - clock.since)}`;
    case 'ended':
      return clock.tookMs === undefined ? 'never ran' : span(clock.tookMs);
  }
}
