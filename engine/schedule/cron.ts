import { Cron } from 'croner';

/** Schedules are read in UTC unless they name a time zone. */
export const DEFAULT_TIMEZONE = 'UTC';

/** A 5-field cron expression read in an IANA time zone, by croner (a maintained parser; we write none). */
export type CompiledCron =
  | { ok: true; cron: Cron; timezone: string }
  | { ok: false; error: string; field: 'cron' | 'timezone' };

/**
 * Compiles `cron` in `timezone`: only the 5 fields minute, hour, day of month, month, day of week
 * (day of month and day of week combine with OR, as in Vixie cron); a 6-field string (seconds) or a
 * value out of range is an error, and so is a time zone the runtime does not know.
 */
export function compileCron(cron: string, timezone: string = DEFAULT_TIMEZONE): CompiledCron {
  const zone = canonicalTimezone(timezone);
  if (zone === undefined) {
    return {
      ok: false,
      field: 'timezone',
      error: `unknown time zone ${JSON.stringify(timezone)}: use an IANA name such as "Europe/Paris" or "UTC"`,
    };
  }
  const fields = cron.trim().split(/\s+/);
  if (!cron.trim().startsWith('@') && fields.length !== 5) {
    return {
      ok: false,
      field: 'cron',
      error: `"cron" must have 5 fields (minute hour day-of-month month day-of-week), got ${fields.length} in ${JSON.stringify(cron)}`,
    };
  }
  try {
    // paused, and without a function: croner arms no timer, it only computes ticks.
    return {
      ok: true,
      cron: new Cron(cron, { mode: '5-part', timezone: zone, paused: true }),
      timezone: zone,
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    return { ok: false, field: 'cron', error: `"cron" ${JSON.stringify(cron)} is not valid: ${reason}` };
  }
}

/** The time zone's canonical IANA name (e.g. "europe/paris" → "Europe/Paris"), or undefined when unknown. */
function canonicalTimezone(timezone: string): string | undefined {
  if (timezone.trim() === '') return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
