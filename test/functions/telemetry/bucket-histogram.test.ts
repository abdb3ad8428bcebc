import { describe, expect, it } from 'vitest';
import { BucketHistogram, geometricBounds } from '../../../functions/telemetry/bucket-histogram.js';
import { PrometheusMetrics } from '../../../functions/telemetry/prometheus-metrics.js';

async function series(histogram: BucketHistogram): Promise<Record<string, number>> {
  const { values } = await histogram.get();
  return Object.fromEntries(
    values.map((value) => [
      value.labels.le === undefined ? (value.metricName ?? '') : `le=${value.labels.le}`,
      value.value,
    ]),
  );
}

describe('BucketHistogram', () => {
  it('counts each observation in the first bucket whose bound is at least it, cumulatively, as Prometheus does', async () => {
    const histogram = new BucketHistogram({ name: 'h', help: 'help', bounds: [0.1, 1, 10] });
    for (const value of [0.05, 0.1, 0.5, 1, 3, 10, 11, 1e9]) histogram.observe(value);
    expect(await series(histogram)).toEqual({
      'le=0.1': 2,
      'le=1': 4,
      'le=10': 6,
      'le=+Inf': 8,
      h_sum: 0.05 + 0.1 + 0.5 + 1 + 3 + 10 + 11 + 1e9,
      h_count: 8,
    });
  });

  it('ignores NaN and refuses bounds that do not ascend', async () => {
    const histogram = new BucketHistogram({ name: 'h', help: 'help', bounds: [1] });
    histogram.observe(Number.NaN);
    expect((await series(histogram)).h_count).toBe(0);
    expect(() => new BucketHistogram({ name: 'h', help: 'help', bounds: [1, 1] })).toThrow(/ascending/);
    expect(() => new BucketHistogram({ name: 'h', help: 'help', bounds: [2, 1] })).toThrow(/ascending/);
  });

  it('builds geometric bounds: so many a doubling, rounded, from the first to past the last', () => {
    const bounds = geometricBounds(0.0001, 120, 3);
    expect(bounds[0]).toBe(0.0001);
    expect(bounds.slice(1, 4)).toEqual([0.000126, 0.000159, 0.0002]);
    expect(bounds.at(-1)).toBeGreaterThanOrEqual(120);
    expect(bounds.at(-2)).toBeLessThan(120);
    for (let k = 1; k < bounds.length; k++) expect(bounds[k]).toBeGreaterThan(bounds[k - 1] as number);
  });

  it('is how PrometheusMetrics writes the step overhead out', async () => {
    const metrics = new PrometheusMetrics();
    metrics.observe('step_overhead_seconds', 0.25);
    metrics.observe('step_overhead_seconds', 500);
    const text = await metrics.text();
    expect(text).toContain('# TYPE switchyard_step_overhead_seconds histogram');
    expect(text).toContain('switchyard_step_overhead_seconds_bucket{le="0.205"} 0');
    expect(text).toContain('switchyard_step_overhead_seconds_bucket{le="0.258"} 1');
    expect(text).toContain('switchyard_step_overhead_seconds_bucket{le="+Inf"} 2');
    expect(text).toContain('switchyard_step_overhead_seconds_count 2');
  });

  it("is how PrometheusMetrics writes the store's write transactions out", async () => {
    const metrics = new PrometheusMetrics();
    metrics.observeStoreWrite(0.0003);
    metrics.observeStoreWrite(0.00004);
    const text = await metrics.text();
    expect(text).toContain('# TYPE switchyard_store_write_seconds histogram');
    expect(text).toContain('switchyard_store_write_seconds_bucket{le="0.00005"} 1');
    expect(text).toContain('switchyard_store_write_seconds_bucket{le="0.000252"} 1');
    expect(text).toContain('switchyard_store_write_seconds_bucket{le="0.000317"} 2');
    expect(text).toContain('switchyard_store_write_seconds_count 2');
  });
});
