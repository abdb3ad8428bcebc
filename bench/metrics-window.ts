/*
 * serve's /metrics over one window: two readings, before and after, subtracted. The step overhead is
 * a histogram (cumulative buckets), so the window's quantiles are interpolated within the bucket
 * they fall in, as Prometheus' histogram_quantile does; the warm-up before the window is left out.
 */

/** One reading of the figures the report uses. */
export interface MetricsReading {
  /** `[upper bound, observations at or below it]`, ascending; the last bound is Infinity. */
  overheadBuckets: [number, number][];
  batchSum: number;
  batchCount: number;
}

export interface WindowFigures {
  /** The manager's overhead per step in the window, seconds, by quantile ("0.5", "0.9", "0.99"). */
  overhead: Record<string, number>;
  overheadCount: number;
  /** Mean replies per store transaction in the window. */
  meanReplyBatch: number;
}

const QUANTILES = [0.5, 0.9, 0.99];

export function parseMetrics(text: string): MetricsReading {
  const overheadBuckets: [number, number][] = [];
  for (const match of text.matchAll(/^switchyard_step_overhead_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm)) {
    const bound = match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]);
    overheadBuckets.push([bound, Number(match[2])]);
  }
  if (!overheadBuckets.length) throw new Error('serve wrote no switchyard_step_overhead_seconds buckets');
  overheadBuckets.sort((a, b) => a[0] - b[0]);
  const value = (pattern: RegExp): number => Number(text.match(pattern)?.[1] ?? Number.NaN);
  return {
    overheadBuckets,
    batchSum: value(/^switchyard_reply_batch_size_sum (\S+)$/m),
    batchCount: value(/^switchyard_reply_batch_size_count (\S+)$/m),
  };
}

/** The quantile of a window's cumulative buckets, interpolated linearly within its bucket. */
export function bucketQuantile(buckets: readonly [number, number][], quantile: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = quantile * total;
  let lower = 0;
  let below = 0;
  for (const [bound, cumulative] of buckets) {
    if (cumulative >= rank && cumulative > below) {
      if (!Number.isFinite(bound)) return lower;
      return lower + ((bound - lower) * (rank - below)) / (cumulative - below);
    }
    lower = bound;
    below = cumulative;
  }
  return lower;
}

export function windowFigures(before: MetricsReading, after: MetricsReading): WindowFigures {
  const earlier = new Map(before.overheadBuckets);
  const buckets = after.overheadBuckets.map(([bound, cumulative]): [number, number] => [
    bound,
    cumulative - (earlier.get(bound) ?? 0),
  ]);
  const overhead: Record<string, number> = {};
  for (const quantile of QUANTILES) overhead[String(quantile)] = bucketQuantile(buckets, quantile);
  return {
    overhead,
    overheadCount: buckets.at(-1)?.[1] ?? 0,
    meanReplyBatch: (after.batchSum - before.batchSum) / (after.batchCount - before.batchCount),
  };
}
