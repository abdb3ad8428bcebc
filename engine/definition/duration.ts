const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** `500ms`, `30s`, `5m`, `1h30m`, `7d` to milliseconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const compact = text.trim();
  if (!DURATION.test(compact)) return undefined;
  let total = 0;
  for (const [, amount, unit] of compact.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  }
  return Math.round(total);
}

/** Milliseconds to the shortest readable form, e.g. 90000 -> `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const amount = Math.floor(rest / size);
    if (amount > 0) {
      parts.push(`${amount}${unit}`);
      rest -= amount * size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join('');
}
