/** Formatting for people: relative times, durations, short ids. Pure: `now` is passed in. */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "12 s ago", "5 min ago", "3 h ago", "2 d ago"; a future time reads "in 40 s". */
export function relativeTime(iso: string | undefined, now: number): string {
  if (!iso) return '—';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '—';
  const delta = now - at;
  const size = Math.abs(delta);
  if (size < 5 * SECOND) return 'just now';
  const amount =
    size < MINUTE
      ? `${Math.floor(size / SECOND)} s`
      : size < HOUR
        ? `${Math.floor(size / MINUTE)} min`
        : size < DAY
          ? `${Math.floor(size / HOUR)} h`
          : `${Math.floor(size / DAY)} d`;
  return delta >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "3 d 4 h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < SECOND) return `${Math.round(ms)} ms`;
  if (ms < MINUTE) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min ${pad(Math.floor((ms % MINUTE) / SECOND))} s`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h ${pad(Math.floor((ms % HOUR) / MINUTE))} min`;
  return `${Math.floor(ms / DAY)} d ${Math.floor((ms % DAY) / HOUR)} h`;
}

/** The time between two ISO instants (the second defaults to `now`), formatted. */
export function elapsedBetween(
  startIso: string | undefined,
  endIso: string | undefined,
  now: number,
): string {
  if (!startIso) return '—';
  const start = Date.parse(startIso);
  const end = endIso ? Date.parse(endIso) : now;
  return formatDuration(end - start);
}

/** The first block of a UUID: enough to tell jobs apart on a page. */
export function shortId(uuid: string): string {
  return uuid.slice(0, 8);
}

/** "1 job", "3 jobs". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}

/** An absolute timestamp for tooltips: "2024-05-01 14:03:22 UTC". */
export function absoluteTime(iso: string | undefined): string {
  if (!iso) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * When the job last moved on: its own `updatedAt`, or later, when the page saw its version change
 * (children finishing count in its version, not in its `updatedAt`).
 */
export function lastChange(updatedAt: string, changedAt: number | undefined): string {
  const updated = Date.parse(updatedAt);
  return changedAt !== undefined && !(changedAt <= updated) ? new Date(changedAt).toISOString() : updatedAt;
}
