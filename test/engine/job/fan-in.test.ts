import { describe, expect, it } from 'vitest';
import {
  afterChildrenFinished,
  type ChildFinished,
  followUpNotNeeded,
  readyToFanIn,
} from '../../../engine/job/fan-in.js';
import type { ChildOutcome } from '../../../engine/job/transition.js';
import type { OutboxEntry } from '../../../engine/ports/store.js';

const PARENT = '00000000-0000-4000-8000-000000000001';

const finished = (index: number, status: 'completed' | 'failed' = 'completed'): ChildFinished => ({
  kind: 'childFinished',
  parentId: PARENT,
  step: 'fan',
  index,
  status,
});

describe('Rules: after children of a fan-out step finish', () => {
  it('fails the step on the first failed child, whatever the counters say', () => {
    const plan = afterChildrenFinished(
      [finished(0), finished(3, 'failed'), finished(4, 'failed')],
      { total: 5, done: 5, failed: 0 },
      { total: 5, concurrency: 2 },
    );
    expect(plan).toEqual({ kind: 'failStep', index: 3 });
  });

  it('fans in once every child has completed', () => {
    expect(
      afterChildrenFinished([finished(4)], { total: 5, done: 5, failed: 0 }, { total: 5, concurrency: 2 }),
    ).toEqual({ kind: 'fanIn' });
  });

  it("moves each finished child's slot on in a limited fan-out", () => {
    const plan = afterChildrenFinished(
      [finished(0), finished(1)],
      { total: 5, done: 2, failed: 0 },
      { total: 5, concurrency: 2 },
    );
    expect(plan).toEqual({ kind: 'nextInSlots', from: [2, 3] });
  });

  it('waits in a fan-out that started every child at once, until the last one finishes', () => {
    const limits = { total: 5, concurrency: Number.POSITIVE_INFINITY };
    expect(afterChildrenFinished([finished(0)], { total: 5, done: 1, failed: 0 }, limits)).toEqual({
      kind: 'wait',
    });
    expect(afterChildrenFinished([finished(0)], undefined, limits)).toEqual({ kind: 'wait' });
  });

  it('is ready to fan in only at the total and without a failure', () => {
    expect(readyToFanIn({ total: 3, done: 3, failed: 0 }, false)).toBe(true);
    expect(readyToFanIn({ total: 3, done: 2, failed: 0 }, false)).toBe(false);
    expect(readyToFanIn({ total: 3, done: 2, failed: 1 }, false)).toBe(false);
    expect(readyToFanIn({ total: 3, done: 3, failed: 1 }, false)).toBe(false);
    expect(readyToFanIn({ total: 0, done: 0, failed: 0 }, false)).toBe(true);
    expect(readyToFanIn(undefined, false)).toBe(false);
  });

  it('is ready to fan in a continueOnError step once every child completed or failed', () => {
    expect(readyToFanIn({ total: 3, done: 2, failed: 1 }, true)).toBe(true);
    expect(readyToFanIn({ total: 3, done: 0, failed: 3 }, true)).toBe(true);
    expect(readyToFanIn({ total: 3, done: 1, failed: 1 }, true)).toBe(false);
    expect(readyToFanIn(undefined, true)).toBe(false);
  });

  it('fans in a continueOnError step whose last child completed after others failed', () => {
    expect(afterChildrenFinished([finished(2)], { total: 3, done: 2, failed: 1 }, undefined, true)).toEqual({
      kind: 'fanIn',
    });
    expect(afterChildrenFinished([finished(2)], { total: 3, done: 2, failed: 1 }, undefined)).toEqual({
      kind: 'wait',
    });
  });
});

describe('Rules: a follow-up only the last child needs', () => {
  const outcome: ChildOutcome = { parentId: PARENT, step: 'fan', index: 1, status: 'completed' };
  const entry = (followUp: ChildFinished): OutboxEntry => ({
    id: 'e',
    kind: 'followUp',
    jobId: 'child',
    createdAt: 0,
    followUp,
  });
  const onlyIfLast = entry({ ...finished(1), onlyIfLast: true });

  it('is not needed while other children are still to finish', () => {
    expect(followUpNotNeeded(onlyIfLast, outcome, { total: 3, done: 1, failed: 0 })).toBe(true);
    expect(followUpNotNeeded(onlyIfLast, outcome, { total: 3, done: 1, failed: 1 })).toBe(true);
  });

  it('is needed by the child that finishes the fan-out', () => {
    expect(followUpNotNeeded(onlyIfLast, outcome, { total: 3, done: 3, failed: 0 })).toBe(false);
    expect(followUpNotNeeded(onlyIfLast, outcome, { total: 3, done: 2, failed: 1 })).toBe(false);
  });

  it('keeps every other entry: not marked, another fan-out, or no counters read', () => {
    const counts = { total: 3, done: 1, failed: 0 };
    expect(followUpNotNeeded(entry(finished(1)), outcome, counts)).toBe(false);
    expect(followUpNotNeeded(onlyIfLast, { ...outcome, step: 'other' }, counts)).toBe(false);
    expect(followUpNotNeeded(onlyIfLast, undefined, counts)).toBe(false);
    expect(followUpNotNeeded(onlyIfLast, outcome, undefined)).toBe(false);
  });
});
