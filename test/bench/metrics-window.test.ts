import { describe, expect, it } from 'vitest';
import { bucketQuantile, parseMetrics, windowFigures } from '../../bench/metrics-window.js';
import { PrometheusMetrics } from '../../functions/telemetry/prometheus-metrics.js';

describe("The benchmark's window on serve's /metrics", () => {
  it('interpolates a quantile within its bucket, as histogram_quantile does', () => {
    const buckets: [number, number][] = [
      [0.01, 0],
      [0.02, 50],
      [0.04, 100],
      [Number.POSITIVE_INFINITY, 100],
    ];
    expect(bucketQuantile(buckets, 0.5)).toBeCloseTo(0.02);
    expect(bucketQuantile(buckets, 0.25)).toBeCloseTo(0.015);
    expect(bucketQuantile(buckets, 0.75)).toBeCloseTo(0.03);
    expect(bucketQuantile(buckets, 0.99)).toBeCloseTo(0.0396);
    expect(bucketQuantile([[Number.POSITIVE_INFINITY, 0]], 0.5)).toBeNaN();
    // Past the last finite bound: that bound, as Prometheus answers.
    expect(
      bucketQuantile(
        [
          [1, 1],
          [Number.POSITIVE_INFINITY, 10],
        ],
        0.99,
      ),
    ).toBe(1);
  });

  it("leaves out what was observed before the window: the warm-up's steps and reply batches", async () => {
    const metrics = new PrometheusMetrics();
    for (let n = 0; n < 1000; n++) metrics.observe('step_overhead_seconds', 5);
    metrics.observe('reply_batch_size', 1);
    const before = parseMetrics(await metrics.text());
    for (let n = 1; n <= 100; n++) metrics.observe('step_overhead_seconds', n / 1000);
    metrics.observe('reply_batch_size', 40);
    metrics.observe('reply_batch_size', 60);
    const figures = windowFigures(before, parseMetrics(await metrics.text()));
    expect(figures.overheadCount).toBe(100);
    expect(figures.meanReplyBatch).toBe(50);
    // 1 to 100 ms evenly: within a bucket's width (a quarter of its bound) of the true quantiles.
    expect(figures.overhead['0.5']).toBeGreaterThan(0.05 * 0.75);
    expect(figures.overhead['0.5']).toBeLessThan(0.05 * 1.26);
    expect(figures.overhead['0.99']).toBeGreaterThan(0.099 * 0.75);
    expect(figures.overhead['0.99']).toBeLessThanOrEqual(0.1 * 1.26);
  });

  it("reads serve's write transactions over the window, and nothing from a serve that does not time them", async () => {
    const metrics = new PrometheusMetrics();
    metrics.observeStoreWrite(1);
    const before = parseMetrics(await metrics.text());
    for (let n = 0; n < 10; n++) metrics.observeStoreWrite(0.0004);
    const figures = windowFigures(before, parseMetrics(await metrics.text()));
    expect(figures.storeWrite['0.5']).toBeGreaterThan(0.000317);
    expect(figures.storeWrite['0.99']).toBeLessThanOrEqual(0.0004);

    const older = (text: string) => parseMetrics(text.replace(/^switchyard_store_write_seconds.*$/gm, ''));
    const text = await metrics.text();
    expect(windowFigures(older(text), older(text)).storeWrite).toEqual({});
  });

  it('says so when serve writes no overhead buckets', () => {
    expect(() => parseMetrics('switchyard_steps_completed_total 3\n')).toThrow(
      /no switchyard_step_overhead_seconds/,
    );
  });
});
