import { describe, expect, it } from 'vitest';
import { jobClock } from '../../../functions/api/job-clock.js';
import type { JobSummary } from '../../../functions/dashboard/src/api-types.js';
import { clockCell, clockFacts } from '../../../functions/dashboard/src/clock-text.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const NOW = T0 + 600_000;

type Timed = Pick<JobSummary, 'status' | 'createdAt' | 'updatedAt'> & Partial<JobSummary>;
const job = (fields: Partial<Timed>): Timed => ({
  status: 'running',
  createdAt: at(0),
  updatedAt: at(0),
  ...fields,
});

describe("A job's clock, as the dashboard says it", () => {
  it.each<[string, Timed, { name: string; value: string }[], string]>([
    [
      'scheduled: when it starts, not how long it ran',
      job({ status: 'scheduled', startAt: at(840) }),
      [{ name: 'Starts in', value: '4 min 00 s' }],
      'starts in 4 min 00 s',
    ],
    [
      'queued: how long it has waited for a slot',
      job({ status: 'queued' }),
      [{ name: 'Queued for', value: '10 min 00 s' }],
      'queued 10 min 00 s',
    ],
    [
      'running: since its first step was sent, not since it was created',
      job({ status: 'running', startedAt: at(540) }),
      [{ name: 'Running for', value: '1 min 00 s' }],
      'running 1 min 00 s',
    ],
    [
      'paused: for how long, and how long it ran before',
      job({ status: 'paused', startedAt: at(0), pausedAt: at(12) }),
      [
        { name: 'Paused for', value: '9 min 48 s' },
        { name: 'Ran for', value: '12.0 s' },
      ],
      'paused 9 min 48 s',
    ],
    [
      'completed after a delayed start: from its start to its end',
      job({ status: 'completed', startAt: at(300), startedAt: at(300), endedAt: at(302) }),
      [{ name: 'Took', value: '2.0 s' }],
      '2.0 s',
    ],
    [
      'cancelled while queued: it never ran',
      job({ status: 'cancelled', endedAt: at(30) }),
      [{ name: 'Took', value: 'never ran' }],
      'never ran',
    ],
  ])('%s', (_, timed, facts, cell) => {
    const clock = jobClock(timed);
    expect(clockFacts(clock, NOW)).toEqual(facts);
    expect(clockCell(clock, NOW)).toBe(cell);
  });
});
