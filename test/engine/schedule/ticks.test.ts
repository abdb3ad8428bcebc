import { describe, expect, it } from 'vitest';
import type { ScheduleDefinition } from '../../../engine/definition/types.js';
import { scheduleKey, tickJobId } from '../../../engine/schedule/identity.js';
import { dueTicks, MAX_CATCH_UP_TICKS, nextTick, nextTicks } from '../../../engine/schedule/ticks.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;

/**
 * A fake clock moving 5 minutes at a time from `from` to `to`, handling the due ticks at each step
 * as a host would (the cursor moves to `now` once they are started): every tick it saw, in order.
 */
function runClock(schedule: ScheduleDefinition, from: string, to: string, stepMs = 5 * MINUTE): string[] {
  const started: string[] = [];
  let cursor = at(from);
  for (let now = at(from) + stepMs; now <= at(to); now += stepMs) {
    started.push(...dueTicks(schedule, { after: cursor, now }).ticks.map(iso));
    cursor = now;
  }
  return started;
}

describe('Rule: the due ticks of a schedule (dueTicks)', () => {
  describe('across DST changes, with a fake clock', () => {
    it('Europe/Paris spring forward: 02:30 does not exist on 29 March, the tick runs at 03:00 CEST', () => {
      const schedule = { cron: '30 2 * * *', timezone: 'Europe/Paris' };
      expect(runClock(schedule, '2026-03-27T00:00:00Z', '2026-03-31T00:00:00Z')).toEqual([
        '2026-03-27T01:30:00.000Z', // 02:30 CET
        '2026-03-28T01:30:00.000Z',
        '2026-03-29T01:00:00.000Z', // 03:00 CEST, the first time after the gap
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
      ]);
    });

    it('Europe/Paris fall back: 02:30 happens twice on 25 October, the tick runs once', () => {
      const schedule = { cron: '30 2 * * *', timezone: 'Europe/Paris' };
      expect(runClock(schedule, '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z')).toEqual([
        '2026-10-24T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST, not again at 02:30 CET
        '2026-10-26T01:30:00.000Z', // 02:30 CET
      ]);
    });

    it('America/New_York spring forward: 02:00 does not exist on 8 March; an interval schedule skips the gap', () => {
      expect(
        runClock(
          { cron: '0 2 * * *', timezone: 'America/New_York' },
          '2026-03-07T00:00:00Z',
          '2026-03-10T00:00:00Z',
        ),
      ).toEqual([
        '2026-03-07T07:00:00.000Z', // 02:00 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT
        '2026-03-09T06:00:00.000Z', // 02:00 EDT
      ]);
      expect(
        runClock(
          { cron: '0,30 2 * * *', timezone: 'America/New_York' },
          '2026-03-07T00:00:00Z',
          '2026-03-10T00:00:00Z',
        ),
      ).toEqual([
        '2026-03-07T07:00:00.000Z',
        '2026-03-07T07:30:00.000Z',
        '2026-03-09T06:00:00.000Z',
        '2026-03-09T06:30:00.000Z',
      ]);
    });

    it('America/New_York fall back: an interval schedule runs through the repeated hour, each tick its own job', () => {
      const schedule = { cron: '*/30 * * * *', timezone: 'America/New_York' };
      const ticks = runClock(schedule, '2026-11-01T05:15:00Z', '2026-11-01T07:15:00Z');
      expect(ticks).toEqual([
        '2026-11-01T05:30:00.000Z', // 01:30 EDT
        '2026-11-01T06:00:00.000Z', // 01:00 EST
        '2026-11-01T06:30:00.000Z', // 01:30 EST
        '2026-11-01T07:00:00.000Z', // 02:00 EST
      ]);
      const key = scheduleKey(schedule);
      const ids = ticks.map((tick) => tickJobId('report', key, at(tick)));
      expect(new Set(ids).size).toBe(4);
    });

    it('a clock that moves in uneven jumps sees the same ticks as one that moves every 5 minutes', () => {
      const schedule = { cron: '*/30 * * * *', timezone: 'America/New_York' };
      const everyMinute = runClock(schedule, '2026-11-01T03:00:00Z', '2026-11-01T09:00:00Z');
      expect(runClock(schedule, '2026-11-01T03:00:00Z', '2026-11-01T09:00:00Z', 17 * MINUTE + 3_000)).toEqual(
        everyMinute.filter((tick) => at(tick) <= at('2026-11-01T03:00:00Z') + 21 * (17 * MINUTE + 3_000)),
      );
    });
  });

  describe('catch-up', () => {
    const daily = { cron: '0 6 * * *' };
    const window = { after: at('2026-05-01T12:00:00Z'), now: at('2026-05-04T12:00:00Z') };

    it('all (the default): every missed tick once, oldest first', () => {
      expect(dueTicks(daily, window)).toEqual({
        ticks: [at('2026-05-02T06:00:00Z'), at('2026-05-03T06:00:00Z'), at('2026-05-04T06:00:00Z')],
        skipped: 0,
      });
    });

    it('latest: only the most recent missed tick', () => {
      expect(dueTicks({ ...daily, catchUp: 'latest' }, window)).toEqual({
        ticks: [at('2026-05-04T06:00:00Z')],
        skipped: 2,
      });
    });

    it(`is bounded: at most ${MAX_CATCH_UP_TICKS} ticks, the latest ones; the rest are counted as skipped`, () => {
      const due = dueTicks(
        { cron: '* * * * *' },
        { after: at('2026-05-01T00:00:00Z'), now: at('2026-05-02T00:00:00Z') },
      );
      expect(due.ticks).toHaveLength(MAX_CATCH_UP_TICKS);
      expect(iso(due.ticks.at(-1) as number)).toBe('2026-05-02T00:00:00.000Z');
      expect(iso(due.ticks[0] as number)).toBe('2026-05-01T22:21:00.000Z');
      expect(due.skipped).toBe(24 * 60 - MAX_CATCH_UP_TICKS);
    });

    it('a tick at `after` was handled; a tick at `now` is due', () => {
      const tick = at('2026-05-02T06:00:00Z');
      expect(dueTicks(daily, { after: tick, now: tick + MINUTE }).ticks).toEqual([]);
      expect(dueTicks(daily, { after: tick - MINUTE, now: tick }).ticks).toEqual([tick]);
      expect(dueTicks(daily, { after: tick, now: tick }).ticks).toEqual([]);
    });
  });

  describe('one job per tick', () => {
    const schedule = { cron: '0 6 * * 1-5', timezone: 'Europe/Paris', input: { kind: 'daily' } };
    const key = scheduleKey(schedule);

    it('a duplicate timer event, or a restart before the cursor moved, finds the same ticks and ids', () => {
      const window = { after: at('2026-05-04T00:00:00Z'), now: at('2026-05-06T12:00:00Z') };
      const ids = (ticks: number[]) => ticks.map((tick) => tickJobId('report', key, tick));
      const first = ids(dueTicks(schedule, window).ticks);
      // The host crashed after starting the jobs, before it stored its cursor: the next run sees the window again.
      const again = ids(dueTicks(schedule, window).ticks);
      expect(first).toHaveLength(3);
      expect(again).toEqual(first);
      // Once the cursor moved to `now`, the same timer firing again finds nothing.
      expect(dueTicks(schedule, { after: window.now, now: window.now }).ticks).toEqual([]);
    });

    it('derives a job id from the workflow, the schedule and the tick only', () => {
      const tick = at('2026-05-04T04:00:00Z');
      const id = tickJobId('report', key, tick);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(tickJobId('report', key, tick)).toBe(id);
      expect(tickJobId('other', key, tick)).not.toBe(id);
      expect(tickJobId('report', scheduleKey({ ...schedule, input: { kind: 'weekly' } }), tick)).not.toBe(id);
      expect(tickJobId('report', key, tick + MINUTE)).not.toBe(id);
      // Reordering keys or spacing changes nothing; catchUp does not name the schedule.
      expect(scheduleKey({ cron: '0  6 * * 1-5', input: { kind: 'daily' }, timezone: 'Europe/Paris' })).toBe(
        key,
      );
      expect(scheduleKey({ ...schedule, catchUp: 'latest' })).toBe(key);
      expect(scheduleKey({ cron: '0 6 * * *' })).toBe(scheduleKey({ cron: '0 6 * * *', timezone: 'UTC' }));
    });
  });

  it('lists the next ticks in the time zone', () => {
    const schedule = { cron: '0 6 * * 1-5', timezone: 'Europe/Paris' };
    // Friday 8 May 2026, then Monday 11 May.
    expect(nextTicks(schedule, at('2026-05-07T12:00:00Z'), 3).map(iso)).toEqual([
      '2026-05-08T04:00:00.000Z',
      '2026-05-11T04:00:00.000Z',
      '2026-05-12T04:00:00.000Z',
    ]);
    expect(nextTick(schedule, at('2026-05-08T04:00:00Z'))).toBe(at('2026-05-11T04:00:00Z'));
  });
});
