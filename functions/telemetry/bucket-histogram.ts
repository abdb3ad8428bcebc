/** What prom-client's Registry reads to write a metric out. */
export interface MetricSnapshot {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

export interface BucketHistogramOptions {
  name: string;
  help: string;
  /** Upper bounds of the buckets, ascending; `+Inf` is added. */
  bounds: readonly number[];
}

/**
 * Bounds from `from` to at least `to`, `perDoubling` of them for each doubling, each rounded to
 * three significant digits: a quantile interpolated within one such bucket is off by at most the
 * bucket's width (26 % of its bound at three a doubling), usually far less.
 */
export function geometricBounds(from: number, to: number, perDoubling: number): number[] {
  const bounds: number[] = [];
  for (let k = 0; ; k++) {
    const bound = Number((from * 2 ** (k / perDoubling)).toPrecision(3));
    bounds.push(bound);
    if (bound >= to) return bounds;
  }
}

/**
 * A Prometheus histogram with fixed buckets and no labels, observed with a binary search and an
 * increment: cheap enough for something observed once per request sent (prom-client's Histogram
 * hashes labels on every observation). Unlike a summary, its buckets subtract: the observations of
 * any window are the difference of two readings, and Prometheus' `histogram_quantile` works on them.
 */
export class BucketHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  /** Observations per bucket (not cumulative); the last one is `+Inf`. */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(options: BucketHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    for (let k = 1; k < options.bounds.length; k++) {
      if (!((options.bounds[k] as number) > (options.bounds[k - 1] as number))) {
        throw new Error(`the bounds of ${options.name} must be ascending`);
      }
    }
    this.bounds = Float64Array.from(options.bounds);
    this.counts = new Float64Array(this.bounds.length + 1);
  }

  observe(value: number): void {
    if (Number.isNaN(value)) return;
    let low = 0;
    let high = this.bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.bounds[middle] as number) < value) low = middle + 1;
      else high = middle;
    }
    this.counts[low] = (this.counts[low] as number) + 1;
    this.sum += value;
    this.count++;
  }

  async get(): Promise<MetricSnapshot> {
    const values: MetricSnapshot['values'] = [];
    let cumulative = 0;
    for (let k = 0; k <= this.bounds.length; k++) {
      cumulative += this.counts[k] as number;
      const le = k < this.bounds.length ? String(this.bounds[k]) : '+Inf';
      values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative });
    }
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: this.sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: this.count });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
