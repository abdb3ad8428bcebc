/*
 * serve's /metrics over one window: two readings, before and after, subtracted. The step overhead is
 * a histogram (cumulative buckets), so the window's quantiles are interpolated within the bucket
 * they fall in, as Prometheus' histogram_quantile does; the warm-up before the window is left out.
 */

type Buckets = [number, number][];

/** One reading of the figures the report uses. */
export interface MetricsReading {
  /** `[upper bound, observations at or below it]`, ascending; the last bound is Infinity. */
  overheadBuckets: Buckets;
  /** The same of serve's write transactions (empty from a serve that does not time them). */
  storeWriteBuckets: Buckets;
  batchSum: number;
  batchCount: number;
}

export interface WindowFigures {
  /** The manager's overhead per step in the window, seconds, by quantile ("0.5", "0.9", "0.99"). */
  overhead: Record<string, number>;
  overheadCount: number;
  /** serve's write transactions in the window (BEGIN to the end of COMMIT), seconds, by quantile; empty when not timed. */
  storeWrite: Record<string, number>;
  /** Mean replies per store transaction in the window. */
  meanReplyBatch: number;
}

const QUANTILES = [0.5, 0.9, 0.99];

function histogramBuckets(text: string, name: string): Buckets {
  const buckets: Buckets = [];
  for (const match of text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm'))) {
    const bound = match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]);
    buckets.push([bound, Number(match[2])]);
  }
  return buckets.sort((a, b) => a[0] - b[0]);
}

export function parseMetrics(text: string): MetricsReading {
  const overheadBuckets = histogramBuckets(text, 'switchyard_step_overhead_seconds');
  if (!overheadBuckets.length) throw new Error('serve wrote no switchyard_step_overhead_seconds buckets');
  const value = (pattern: RegExp): number => Number(text.match(pattern)?.[1] ?? Number.NaN);
  return {
    overheadBuckets,
    storeWriteBuckets: histogramBuckets(text, 'switchyard_store_write_seconds'),
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

/** The observations between two readings of one histogram. */
function windowBuckets(before: Buckets, after: Buckets): Buckets {
  const earlier = new Map(before);
  return after.map(([bound, cumulative]): [number, number] => [
    bound,
    cumulative - (earlier.get(bound) ?? 0),
  ]);
}

function quantiles(buckets: Buckets): Record<string, number> {
  const figures: Record<string, number> = {};
  if (buckets.length)
    for (const quantile of QUANTILES) figures[String(quantile)] = bucketQuantile(buckets, quantile);
  return figures;
}

/** Quantiles in seconds (a window's figures) as milliseconds, by the same keys. */
export function quantilesMs(seconds: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(seconds).map(([quantile, value]) => [quantile, value * 1000]));
}

export function windowFigures(before: MetricsReading, after: MetricsReading): WindowFigures {
  const buckets = windowBuckets(before.overheadBuckets, after.overheadBuckets);
  return {
    overhead: quantiles(buckets),
    overheadCount: buckets.at(-1)?.[1] ?? 0,
    storeWrite: quantiles(windowBuckets(before.storeWriteBuckets, after.storeWriteBuckets)),
    meanReplyBatch: (after.batchSum - before.batchSum) / (after.batchCount - before.batchCount),
  };
}
