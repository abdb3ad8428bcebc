import type { Cron } from 'croner';
import type { ScheduleDefinition } from '../definition/types.js';
import { compileCron } from './cron.js';

/**
 * The most ticks one catch-up starts (`catchUp: all`): after a long outage, only the latest this many
 * missed ticks start; the older ones are skipped (and counted as such).
 */
export const MAX_CATCH_UP_TICKS = 100;

/** Ticks looked at one by one before jumping to the latest: skipped ticks are counted up to here. */
const MAX_SCANNED_TICKS = 10_000;

export interface DueTicks {
  /** Tick times (ms since the epoch) to start a job for, oldest first. */
  ticks: number[];
  /** Missed ticks left out: by `catchUp: latest`, or beyond `MAX_CATCH_UP_TICKS`. */
  skipped: number;
}

/**
 * Which ticks of a schedule are due at `now`, when every tick up to `after` was handled: those in
 * (after, now], each once (`catchUp: all`, the latest `MAX_CATCH_UP_TICKS` of them at most), or only
 * the latest of them (`catchUp: latest`). Ticks come from croner, in the schedule's time zone: a
 * time skipped by a DST change runs at the first valid time after the gap (fixed-time schedules) or
 * not at all (interval schedules such as `*\/15 * * * *`); a time that occurs twice runs once for a
 * fixed-time schedule and on both occurrences for an interval one. Each is a distinct instant, so
 * each has its own job id.
 */
export function dueTicks(
  schedule: ScheduleDefinition,
  window: { after: number; now: number },
  maxCatchUp: number = MAX_CATCH_UP_TICKS,
): DueTicks {
  if (window.now <= window.after) return { ticks: [], skipped: 0 };
  const cron = compiled(schedule);
  const limit = schedule.catchUp === 'latest' ? 1 : maxCatchUp;
  const ticks: number[] = [];
  let skipped = 0;
  let from = new Date(window.after);
  // Forward from `after` (nextRun excludes its start): one call when nothing is due, as at most times.
  while (skipped + ticks.length < MAX_SCANNED_TICKS) {
    const next = cron.nextRun(from);
    if (!next || next.getTime() > window.now) return { ticks, skipped };
    ticks.push(next.getTime());
    if (ticks.length > limit) {
      ticks.shift();
      skipped++;
    }
    from = next;
  }
  // A long outage of a frequent schedule: the latest ticks straight from `now` (previousRuns excludes
  // its reference time, so 1 ms later includes a tick at `now`); what lies between is counted to here only.
  const latest = cron
    .previousRuns(limit, new Date(window.now + 1))
    .map((date) => date.getTime())
    .filter((tick) => tick > from.getTime())
    .reverse();
  return { ticks: latest, skipped: skipped + ticks.length };
}

/** The first tick after `after` (ms), or undefined when the schedule has no more. */
export function nextTick(schedule: ScheduleDefinition, after: number): number | undefined {
  return compiled(schedule).nextRun(new Date(after))?.getTime();
}

/** The next `count` ticks after `after`, for listings. */
export function nextTicks(schedule: ScheduleDefinition, after: number, count: number): number[] {
  return compiled(schedule)
    .nextRuns(count, new Date(after))
    .map((date) => date.getTime());
}

/** Compiled crons by text and zone: a host asks about the same few schedules again and again. */
const crons = new Map<string, Cron>();
const MAX_CACHED_CRONS = 1000;

function compiled(schedule: ScheduleDefinition): Cron {
  const id = `${schedule.timezone ?? ''} ${schedule.cron}`;
  const cached = crons.get(id);
  if (cached) return cached;
  const result = compileCron(schedule.cron, schedule.timezone);
  // Definitions are validated before they are stored; an invalid one here is a bug.
  if (!result.ok) throw new Error(result.error);
  if (crons.size >= MAX_CACHED_CRONS) crons.clear();
  crons.set(id, result.cron);
  return result.cron;
}
