import { describe, expect, it } from 'vitest';
import type { JobDocument, StepView } from '../../../functions/dashboard/src/api-types.js';
import {
  layoutTimeline,
  MIN_BAR_WIDTH,
  offsetLabel,
  segmentState,
  ticks,
} from '../../../functions/dashboard/src/timeline.js';

const T0 = Date.parse('2024-05-01T12:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

function job(
  steps: Record<string, Partial<StepView>>,
  extra: Partial<JobDocument> = {},
): Pick<JobDocument, 'status' | 'createdAt' | 'endedAt' | 'updatedAt' | 'steps'> {
  return {
    status: 'completed',
    createdAt: at(0),
    updatedAt: at(100),
    endedAt: at(100),
    steps: Object.fromEntries(
      Object.entries(steps).map(([name, view]) => [
        name,
        { status: 'completed', attempt: 1, attempts: [], ...view },
      ]),
    ),
    ...extra,
  };
}

describe('Function: layoutTimeline', () => {
  it("draws each step from its first attempt's sending to its end, on an axis from the job's start", () => {
    const layout = layoutTimeline(
      job({
        a: {
          attempts: [{ attempt: 1, sentAt: at(0), endedAt: at(20), outcome: 'completed' }],
          endedAt: at(20),
        },
        b: {
          attempts: [{ attempt: 1, sentAt: at(50), endedAt: at(100), outcome: 'completed' }],
          endedAt: at(100),
        },
      }),
      ['a', 'b'],
      T0 + 500_000,
      1000,
    );
    expect(layout.start).toBe(T0);
    expect(layout.end).toBe(T0 + 100_000);
    expect(layout.rows.map((row) => [row.step, row.bar?.x, row.bar?.width])).toEqual([
      ['a', 0, 200],
      ['b', 500, 500],
    ]);
  });

  it('makes each attempt a segment; the gap before a retry is left to the bar', () => {
    const layout = layoutTimeline(
      job({
        flaky: {
          attempt: 2,
          attempts: [
            { attempt: 1, sentAt: at(0), endedAt: at(10), outcome: 'timeout', error: 'no reply within 10s' },
            { attempt: 2, sentAt: at(30), endedAt: at(100), outcome: 'completed' },
          ],
          endedAt: at(100),
        },
      }),
      ['flaky'],
      0,
      1000,
    );
    const [row] = layout.rows;
    expect(
      row?.segments.map((segment) => [segment.attempt, segment.outcome, segment.x, segment.width]),
    ).toEqual([
      [1, 'timeout', 0, 100],
      [2, 'completed', 300, 700],
    ]);
    expect(row?.segments[0]?.error).toBe('no reply within 10s');
    expect(segmentState('timeout')).toBe('failed');
  });

  it("runs a running job's axis, and its running step, up to now", () => {
    const now = T0 + 40_000;
    const layout = layoutTimeline(
      job(
        {
          a: { status: 'running', attempts: [{ attempt: 1, sentAt: at(10) }] },
          b: { status: 'waiting', attempt: 0 },
        },
        { status: 'running', endedAt: undefined },
      ),
      ['a', 'b'],
      now,
      400,
    );
    expect(layout.end).toBe(now);
    const [a, b] = layout.rows;
    expect(a?.bar).toMatchObject({ x: 100, width: 300 });
    expect(a?.segments[0]).toMatchObject({ outcome: 'running', x: 100, width: 300 });
    expect(b?.bar).toBeUndefined();
    expect(b?.status).toBe('waiting');
  });

  it('keeps an instant step visible, follows the given order, and puts unknown steps last', () => {
    const layout = layoutTimeline(
      job({
        z: {
          attempts: [{ attempt: 1, sentAt: at(5), endedAt: at(5), outcome: 'completed' }],
          endedAt: at(5),
        },
        a: { status: 'skipped', attempt: 0 },
        extra: { attempts: [{ attempt: 1, sentAt: at(1), endedAt: at(2), outcome: 'completed' }] },
      }),
      ['a', 'z'],
      0,
      1000,
    );
    expect(layout.rows.map((row) => row.step)).toEqual(['a', 'z', 'extra']);
    expect(layout.rows[1]?.bar?.width).toBe(MIN_BAR_WIDTH);
    expect(layout.rows[1]?.segments[0]?.width).toBe(MIN_BAR_WIDTH);
  });

  it('draws a step without an attempts list as one segment from its start', () => {
    const layout = layoutTimeline(
      job({ old: { startedAt: at(0), endedAt: at(50), status: 'failed', attempts: undefined as never } }),
      ['old'],
      0,
      100,
    );
    expect(layout.rows[0]?.segments).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'error', x: 0, width: 50 }),
    ]);
  });
});

describe('Function: ticks', () => {
  it('puts a few round offsets on the axis', () => {
    const marks = ticks(100_000, 10 / 1000);
    expect(marks.map((mark) => mark.label)).toEqual(['0', '30 s', '1 min', '1 min 30 s']);
    expect(marks[1]?.x).toBe(300);
    expect(ticks(3 * 3600_000, 1).length).toBeLessThanOrEqual(7);
  });

  it.each([
    [0, '0'],
    [250, '250 ms'],
    [5000, '5 s'],
    [1250, '1.25 s'],
    [90_000, '1 min 30 s'],
    [2 * 3600_000, '2 h'],
    [30 * 3600_000, '1 d 6 h'],
  ])('offsetLabel(%d) is %s', (ms, label) => {
    expect(offsetLabel(ms)).toBe(label);
  });
});
