/**
 * The value of a Prometheus sample (`name{labels} value`) in `/metrics` text: the sum of every series
 * of `name` whose labels include `labels` (a counter labelled by step, read for all steps); 0 when absent.
 */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').slice(1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      found[pair[1] as string] = pair[2] as string;
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) sum += Number(match[3]);
  }
  return sum;
}
