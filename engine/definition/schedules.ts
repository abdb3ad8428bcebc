import { describeJsonType, isJsonObject, type Json } from '../json.js';
import { compileCron, DEFAULT_TIMEZONE } from '../schedule/cron.js';
import { scheduleKey } from '../schedule/identity.js';
import { closest } from './closest.js';
import type { Path } from './parse-source.js';
import type { ScheduleDefinition } from './types.js';

export const SCHEDULE_KEYS = ['cron', 'timezone', 'input', 'catchUp'];
export const CATCH_UPS = ['all', 'latest'];
/** A workflow's schedules, at most (each is a real EventBridge schedule deployed). */
const MAX_SCHEDULES = 20;

type Report = (path: Path, message: string, onKey?: boolean) => void;

/**
 * `schedules:` of a workflow, normalised: the defaults (`timezone: UTC`, `catchUp: all`, an empty
 * input) are left out and the time zone gets its canonical name, so that two files meaning the same
 * thing compare equal.
 */
export function readSchedules(
  raw: Json | undefined,
  path: Path,
  report: Report,
): ScheduleDefinition[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) {
    report(
      path,
      `"schedules" must be a list, e.g. [ { cron: "0 6 * * 1-5" } ]; got ${describeJsonType(raw)}`,
    );
    return undefined;
  }
  if (raw.length > MAX_SCHEDULES) {
    report(path, `"schedules" lists ${raw.length} schedules; a workflow may have at most ${MAX_SCHEDULES}`);
    return undefined;
  }
  const schedules: ScheduleDefinition[] = [];
  const keys = new Set<string>();
  raw.forEach((entry, index) => {
    const schedule = readSchedule(entry, [...path, index], report);
    if (!schedule) return;
    const key = scheduleKey(schedule);
    if (keys.has(key)) {
      report([...path, index], 'the same schedule (cron, time zone and input) is listed twice');
      return;
    }
    keys.add(key);
    schedules.push(schedule);
  });
  return schedules;
}

function readSchedule(raw: Json, path: Path, report: Report): ScheduleDefinition | undefined {
  if (!isJsonObject(raw)) {
    report(path, `a schedule must be a mapping with a "cron", got ${describeJsonType(raw)}`);
    return undefined;
  }
  let valid = true;
  for (const key of Object.keys(raw)) {
    if (SCHEDULE_KEYS.includes(key)) continue;
    const suggestion = closest(key, SCHEDULE_KEYS);
    report(
      [...path, key],
      `unknown schedule key "${key}"${suggestion ? `: did you mean "${suggestion}"?` : ` (known keys: ${SCHEDULE_KEYS.join(', ')})`}`,
      true,
    );
    valid = false;
  }
  if (typeof raw.cron !== 'string' || raw.cron.trim() === '') {
    report(
      raw.cron === undefined ? path : [...path, 'cron'],
      raw.cron === undefined
        ? 'a schedule needs a "cron", e.g. "0 6 * * 1-5" (minute hour day-of-month month day-of-week)'
        : `"cron" must be text such as "0 6 * * 1-5", got ${describeJsonType(raw.cron)}`,
    );
    return undefined;
  }
  const schedule: ScheduleDefinition = { cron: raw.cron.trim().split(/\s+/).join(' ') };
  let timezone = DEFAULT_TIMEZONE;
  if (raw.timezone !== undefined && raw.timezone !== null) {
    if (typeof raw.timezone !== 'string') {
      report(
        [...path, 'timezone'],
        `"timezone" must be text such as "Europe/Paris", got ${describeJsonType(raw.timezone)}`,
      );
      return undefined;
    }
    timezone = raw.timezone;
  }
  const compiled = compileCron(schedule.cron, timezone);
  if (!compiled.ok) {
    report([...path, compiled.field], compiled.error);
    return undefined;
  }
  if (compiled.timezone !== DEFAULT_TIMEZONE) schedule.timezone = compiled.timezone;
  if (raw.input !== undefined && raw.input !== null) {
    if (!isJsonObject(raw.input)) {
      report(
        [...path, 'input'],
        `"input" must be a mapping (each tick's job input), got ${describeJsonType(raw.input)}`,
      );
      valid = false;
    } else if (Object.keys(raw.input).length) {
      schedule.input = raw.input;
    }
  }
  if (raw.catchUp !== undefined && raw.catchUp !== null) {
    if (typeof raw.catchUp !== 'string' || !CATCH_UPS.includes(raw.catchUp)) {
      report(
        [...path, 'catchUp'],
        `"catchUp" must be "all" (the default) or "latest", got ${JSON.stringify(raw.catchUp)}`,
      );
      valid = false;
    } else if (raw.catchUp === 'latest') {
      schedule.catchUp = 'latest';
    }
  }
  return valid ? schedule : undefined;
}
