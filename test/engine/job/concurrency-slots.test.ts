import { describe, expect, it } from 'vitest';
import { isLimited, slotIndexesFrom, slotStarts, slotTurn } from '../../../engine/job/concurrency-slots.js';
import type { JobStatus } from '../../../engine/job/types.js';

const statusesOf =
  (statuses: readonly (JobStatus | undefined)[]) =>
  (index: number): JobStatus | undefined =>
    statuses[index];

describe('Rules: concurrency slots of a limited fan-out', () => {
  it('is limited only when it may run fewer children at once than it has', () => {
    expect(isLimited({ total: 5, concurrency: 2 })).toBe(true);
    expect(isLimited({ total: 5, concurrency: 5 })).toBe(false);
    expect(isLimited({ total: 5, concurrency: Number.POSITIVE_INFINITY })).toBe(false);
  });

  it('runs slot s as children s, s + c, s + 2c… below the total', () => {
    expect([...slotIndexesFrom(1, { total: 10, concurrency: 3 })]).toEqual([1, 4, 7]);
    expect([...slotIndexesFrom(5, { total: 10, concurrency: 3 })]).toEqual([5, 8]);
    expect([...slotIndexesFrom(10, { total: 10, concurrency: 3 })]).toEqual([]);
  });

  it('passes the turn on past a completed child, starts a waiting one, and is held by any other', () => {
    expect(slotTurn('completed')).toBe('passOn');
    expect(slotTurn('waiting')).toBe('start');
    expect(slotTurn('running')).toBe('hold');
    expect(slotTurn('failed')).toBe('hold');
    expect(slotTurn('cancelled')).toBe('hold');
    expect(slotTurn(undefined)).toBe('hold');
  });

  it("starts each slot's first child that has not completed, when it waits", () => {
    const limits = { total: 7, concurrency: 3 };
    // slot 0: 0, 3, 6 · slot 1: 1, 4 · slot 2: 2, 5
    const statuses: JobStatus[] = [
      'completed',
      'running',
      'completed',
      'waiting',
      'waiting',
      'waiting',
      'waiting',
    ];
    expect(slotStarts(statusesOf(statuses), limits)).toEqual([3, 5]);
  });

  it('starts nothing in a slot whose next child is missing or failed', () => {
    const limits = { total: 4, concurrency: 2 };
    expect(slotStarts(statusesOf(['completed', 'failed', undefined, 'waiting']), limits)).toEqual([]);
  });

  it('gives an unlimited fan-out one slot per child', () => {
    const limits = { total: 3, concurrency: Number.POSITIVE_INFINITY };
    expect(slotStarts(statusesOf(['waiting', 'completed', 'waiting']), limits)).toEqual([0, 2]);
  });
});
