import { createHash } from 'node:crypto';
import type { ScheduleDefinition } from '../definition/types.js';
import { uuidV5 } from '../job/uuid-v5.js';
import type { Json } from '../json.js';
import { DEFAULT_TIMEZONE } from './cron.js';

/**
 * What names a schedule within its workflow: its cron, time zone and input (not its place in the
 * list, so reordering the list changes nothing). Editing any of them makes a new schedule, whose
 * ticks count from when it is first seen. 16 hex digits of a SHA-256, safe in any resource name.
 */
export function scheduleKey(schedule: ScheduleDefinition): string {
  const identity = canonicalJson({
    cron: schedule.cron.trim().split(/\s+/).join(' '),
    timezone: schedule.timezone ?? DEFAULT_TIMEZONE,
    input: schedule.input ?? {},
  });
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/**
 * The job id of one tick: derived (UUIDv5) from the workflow, the schedule and the tick's instant, so
 * however often a tick is handled (a restart mid-tick, a timer that fires twice, EventBridge
 * delivering an event again), it starts one job; starting a job under an id it already has is
 * idempotent.
 */
export function tickJobId(workflow: string, key: string, tick: number): string {
  return uuidV5(`schedule/${workflow}/${key}/${new Date(tick).toISOString()}`);
}

/** JSON with object keys sorted, so that the same value always gives the same text. */
function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as Json)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
