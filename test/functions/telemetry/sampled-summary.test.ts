import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../functions/telemetry/prometheus-metrics.js';
import { SampledSummary } from '../../../functions/telemetry/sampled-summary.js';

function summary(clock: () => number = () => 0): SampledSummary {
  return new SampledSummary({
    name: 'overhead_seconds',
    help: 'help',
    percentiles: [0.5, 0.9, 0.99],
    maxAgeSeconds: 600,
    ageBuckets: 5,
    clock,
  });
}

async function quantiles(metric: SampledSummary): Promise<Record<string, number>> {
  const { values } = await metric.get();
  return Object.fromEntries(
    values.map((value) => [value.metricName ?? `q${value.labels.quantile}`, value.value]),
  );
}

describe('SampledSummary', () => {
  it('gives exact quantiles while it holds every observation, and counts all of them', async () => {
    const metric = summary();
    for (let n = 1; n <= 1000; n++) metric.observe(n);
    expect(await quantiles(metric)).toEqual({
      'q0.5': 500,
      'q0.9': 900,
      'q0.99': 990,
      overhead_seconds_sum: 500_500,
      overhead_seconds_count: 1000,
    });
  });

  it('stays within a few percent when it samples many more observations than it keeps', async () => {
    const metric = summary();
    for (let n = 0; n < 200_000; n++) metric.observe((n * 7919) % 200_000);
    const found = await quantiles(metric);
    expect(found['q0.5']).toBeGreaterThan(0.47 * 200_000);
    expect(found['q0.5']).toBeLessThan(0.53 * 200_000);
    expect(found['q0.99']).toBeGreaterThan(0.97 * 200_000);
    expect(found.overhead_seconds_count).toBe(200_000);
  });

  it('forgets observations older than maxAgeSeconds, keeping the count', async () => {
    let now = 0;
    const metric = summary(() => now);
    for (let n = 0; n < 100; n++) metric.observe(1);
    now = 700_000;
    for (let n = 0; n < 100; n++) metric.observe(2);
    const found = await quantiles(metric);
    expect(found['q0.5']).toBe(2);
    expect(found.overhead_seconds_count).toBe(200);
    now = 1_400_000;
    expect((await quantiles(metric))['q0.5']).toBeNaN();
  });

  it('is written out as a summary by PrometheusMetrics', async () => {
    const metrics = new PrometheusMetrics();
    metrics.observe('step_overhead_seconds', 0.25);
    const text = await metrics.text();
    expect(text).toContain('# TYPE switchyard_step_overhead_seconds summary');
    expect(text).toContain('switchyard_step_overhead_seconds{quantile="0.5"} 0.25');
    expect(text).toContain('switchyard_step_overhead_seconds_count 1');
  });
});
