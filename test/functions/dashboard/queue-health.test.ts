import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../../functions/api/api-service.js';
import type { JobDocument, StepView } from '../../../functions/dashboard/src/api-types.js';
import {
  QUEUE_CHECK_AFTER_MS,
  queuesToCheck,
  unattended,
  unheardQueues,
} from '../../../functions/dashboard/src/queue-health.js';

describe('Function: unattended', () => {
  it.each([
    [{ ready: 5, consumers: 0 }, true],
    [{ ready: 0, consumers: 0 }, false],
    [{ ready: 5, consumers: 2 }, false],
    [{ ready: 5, consumers: 'unknown' as const }, false],
    [{}, false],
  ])('%j: %s', (queue, expected) => {
    expect(unattended(queue)).toBe(expected);
  });
});

describe('Function: queuesToCheck', () => {
  const NOW = Date.parse('2026-01-01T10:00:00.000Z');
  const sent = (msAgo: number): StepView => ({
    status: 'running',
    attempt: 1,
    attempts: [{ attempt: 1, sentAt: new Date(NOW - msAgo).toISOString() }],
  });
  const job = (steps: Record<string, StepView>): Pick<JobDocument, 'status' | 'steps'> => ({
    status: 'running',
    steps,
  });
  const steps = [
    { name: 'fetch', queue: 'fetching' },
    { name: 'price' },
    { name: 'approve', type: 'signal' as const },
    { name: 'lines', task: 'line' },
  ];
  const tasks = [{ name: 'line', itemListKey: 'lines', steps: [{ name: 'price-line', queue: 'pricing' }] }];

  it("names the queues of worker steps running a while, and of a fan-out's task while children run", () => {
    const names = queuesToCheck(
      job({
        fetch: sent(QUEUE_CHECK_AFTER_MS),
        price: sent(QUEUE_CHECK_AFTER_MS - 1),
        approve: sent(60_000),
        lines: { ...sent(60_000), children: 3, childrenDone: 1 },
      }),
      steps,
      tasks,
      NOW,
    );
    expect([...names]).toEqual(['fetching', 'pricing']);
  });

  it('names none for a job that is not running', () => {
    const paused = { ...job({ fetch: sent(60_000) }), status: 'paused' as const };
    expect(queuesToCheck(paused, steps, tasks, NOW).size).toBe(0);
  });
});

describe('Function: unheardQueues', () => {
  const report = (queue: string, fields: Partial<QueueReport>): QueueReport => ({
    queue,
    vhost: null,
    exists: true,
    steps: [],
    ...fields,
  });

  it('keeps the queues named that have no consumer or do not exist, and not those it cannot tell of', () => {
    const reports = [
      report('fetching', { ready: 2, consumers: 0 }),
      report('pricing', { ready: 0, consumers: 1 }),
      report('gone', { exists: false }),
      report('unknown', { exists: false, error: 'RabbitMQ is not reachable' }),
      report('elsewhere', { ready: 9, consumers: 0 }),
    ];
    const names = new Set(['fetching', 'pricing', 'gone', 'unknown']);
    expect(unheardQueues(reports, names).map((one) => one.queue)).toEqual(['fetching', 'gone']);
  });
});
