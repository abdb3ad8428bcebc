import { ApiError } from './http.js';

/** RFC 3339 date-time: a date, `T`, a time with seconds (fraction optional), and `Z` or an offset. */
export const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
/** How far ahead a delayed start may be: further is more likely a typo (a year 20260) than a plan. */
const MAX_START_AHEAD_MS = 366 * 86_400_000;

/**
 * `?at=` of a start: an RFC 3339 time later than `now` and within a year, in ms since the epoch. A
 * malformed or impossible time (`2026-02-30T…`), one in the past, or one too far ahead is a 400.
 */
export function parseStartAt(text: string, now: number): number {
  const match = RFC3339.exec(text);
  const at = match ? Date.parse(text.toUpperCase()) : Number.NaN;
  if (!match || Number.isNaN(at) || !sameCalendarDate(match, at)) {
    throw new ApiError(
      'bad_request',
      `"at" must be an RFC 3339 time such as "2026-12-01T06:00:00Z" or "2026-12-01T07:00:00+01:00", got ${JSON.stringify(text)}`,
    );
  }
  if (at <= now) {
    throw new ApiError(
      'bad_request',
      `"at" is in the past (${new Date(at).toISOString()}, now is ${new Date(now).toISOString()}): give a later time, or start the job without "at"`,
    );
  }
  if (at - now > MAX_START_AHEAD_MS) {
    throw new ApiError('bad_request', `"at" (${new Date(at).toISOString()}) is more than a year ahead`);
  }
  return at;
}

/** Date.parse rolls 30 February over into March; the fields written must be the fields read back. */
function sameCalendarDate(match: RegExpExecArray, at: number): boolean {
  const [, year, month, day, hour, minute, second, , zone] = match;
  const offset = zone === 'Z' || zone === 'z' ? 0 : offsetMinutes(zone as string);
  const local = new Date(at + offset * 60_000);
  return (
    local.getUTCFullYear() === Number(year) &&
    local.getUTCMonth() + 1 === Number(month) &&
    local.getUTCDate() === Number(day) &&
    local.getUTCHours() === Number(hour) &&
    local.getUTCMinutes() === Number(minute) &&
    local.getUTCSeconds() === Number(second)
  );
}

function offsetMinutes(zone: string): number {
  const sign = zone.startsWith('-') ? -1 : 1;
  return sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
}
