import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { OVERFLOW_VALUE } from '../../../functions/telemetry/label-cap.js';
import { PrometheusMetrics } from '../../../functions/telemetry/prometheus-metrics.js';
import { silentLogger } from '../../../functions/telemetry/telemetry.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: checkout
    steps:
      - name: reserve
        queue: stock
      - name: charge
        queue: payments
        depends: [ reserve ]
        retries: 5
      - name: ship
        depends: [ charge ]
`;

/** The value of one series of `/metrics` text, by its name and labels (0 when absent). */
function seriesValue(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split('\n')
    .find(
      (candidate) => candidate.startsWith(`${name}{`) && wanted.every((part) => candidate.includes(part)),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('Metrics with labels: the failing step of an incident, from /metrics alone', () => {
  it('a worker that fails 30% of its requests shows as failed attempts and retries of its step and queue, the others clean', async () => {
    // Prepare: 100 jobs; the payments worker fails every third-or-so request (30 of 100 first attempts).
    const store = new MemoryStore();
    const metrics = new PrometheusMetrics(store);
    const world = new SimulatedWorld(store, { logger: silentLogger, metrics });
    await world.register(WORKFLOWS);
    for (let n = 0; n < 100; n++) await world.start('checkout', { n });

    // Act: the workers answer until every job has completed.
    let failures = 0;
    let charges = 0;
    for (let round = 0; round < 50; round++) {
      const requests = world.take();
      if (!requests.length) {
        // Retries wait for their delay.
        await world.advance(60_000);
        continue;
      }
      for (const request of requests) {
        const failing = request.queue === 'payments' && charges++ % 10 < 3;
        if (failing) {
          failures++;
          await world.reply(request, JSON.stringify({ error: 'gateway said 502' }), { type: 'error' });
        } else await world.reply(request, {});
      }
    }

    // Assess: the failures are the payments queue's, of step charge in checkout; nothing else failed.
    const text = await metrics.text();
    const charge = { namespace: 'default', workflow: 'checkout', step: 'charge', queue: 'payments' };
    expect(failures).toBeGreaterThanOrEqual(30);
    expect(seriesValue(text, 'switchyard_step_attempts_failed_total', charge)).toBe(failures);
    expect(seriesValue(text, 'switchyard_retries_total', charge)).toBe(failures);
    expect(seriesValue(text, 'switchyard_steps_dispatched_total', charge)).toBe(100 + failures);
    expect(seriesValue(text, 'switchyard_steps_completed_total', charge)).toBe(100);
    for (const [step, queue] of [
      ['reserve', 'stock'],
      ['ship', 'ship'],
    ]) {
      const labels = { workflow: 'checkout', step: step as string, queue: queue as string };
      expect(seriesValue(text, 'switchyard_step_attempts_failed_total', labels), step).toBe(0);
      expect(seriesValue(text, 'switchyard_steps_completed_total', labels), step).toBe(100);
    }
    expect(seriesValue(text, 'switchyard_step_duration_seconds_count', charge)).toBe(100);
  });

  it('bounds each label: values past the cap count as other', async () => {
    const metrics = new PrometheusMetrics(undefined, { maxLabelValues: 3 });
    for (let n = 0; n < 10; n++)
      metrics.count('steps_dispatched_total', {
        namespace: 'default',
        workflow: `w${n}`,
        step: 'a',
        queue: 'q',
      });
    const text = await metrics.text();
    for (const kept of ['w0', 'w1', 'w2'])
      expect(seriesValue(text, 'switchyard_steps_dispatched_total', { workflow: kept })).toBe(1);
    expect(seriesValue(text, 'switchyard_steps_dispatched_total', { workflow: OVERFLOW_VALUE })).toBe(7);
    expect(text).not.toContain('workflow="w3"');
  });

  it('adds counts of the same labels into one series, whether passed as one object or many, and across scrapes', async () => {
    const metrics = new PrometheusMetrics();
    const step = { namespace: 'default', workflow: 'w', step: 'a', queue: 'q' };
    for (let n = 0; n < 5; n++) metrics.count('steps_completed_total', step);
    for (let n = 0; n < 3; n++) metrics.count('steps_completed_total', { ...step });
    for (let n = 0; n < 4; n++) metrics.count('jobs_finished_total', { status: 'completed' });
    metrics.count('jobs_finished_total', { status: 'failed' }, 2);
    const first = await metrics.text();
    metrics.count('steps_completed_total', step);
    const second = await metrics.text();

    expect(seriesValue(first, 'switchyard_steps_completed_total', step)).toBe(8);
    expect(
      first.split('\n').filter((line) => line.startsWith('switchyard_steps_completed_total{')),
    ).toHaveLength(1);
    expect(seriesValue(first, 'switchyard_jobs_finished_total', { status: 'completed' })).toBe(4);
    expect(seriesValue(first, 'switchyard_jobs_finished_total', { status: 'failed' })).toBe(2);
    expect(seriesValue(second, 'switchyard_steps_completed_total', step)).toBe(9);
    expect(seriesValue(second, 'switchyard_jobs_finished_total', { status: 'completed' })).toBe(4);
  });

  it('gauges each step queue’s ready messages and consumers at the scrape, and a failed look sets none', async () => {
    const metrics = new PrometheusMetrics();
    let broken = false;
    metrics.watchQueues(async () => {
      if (broken) throw new Error('the broker is down');
      return [
        { namespace: 'default', queue: 'payments', vhost: null, exists: true, ready: 12, consumers: 0 },
        { namespace: 'team-a', queue: 'team-a.stock', vhost: '/', exists: true, ready: 0, consumers: 3 },
        { namespace: 'default', queue: 'never-sent', vhost: null, exists: false },
      ];
    });
    const text = await metrics.text();
    expect(seriesValue(text, 'switchyard_queue_ready_messages', { queue: 'payments' })).toBe(12);
    expect(seriesValue(text, 'switchyard_queue_consumers', { queue: 'payments' })).toBe(0);
    expect(text).toMatch(/switchyard_queue_consumers\{namespace="default",queue="payments",vhost=""\} 0/);
    expect(
      seriesValue(text, 'switchyard_queue_consumers', { namespace: 'team-a', queue: 'team-a.stock' }),
    ).toBe(3);
    expect(text).not.toContain('never-sent');
    await new Promise((resolve) => setTimeout(resolve, 5));
    broken = true;
    const down = await metrics.text();
    expect(down).not.toContain('queue="payments"');
  });
});
