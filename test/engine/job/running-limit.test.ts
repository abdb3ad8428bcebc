import { describe, expect, it } from 'vitest';
import { formatDefinitionError, loadWorkflows } from '../../../engine/index.js';
import {
  admit,
  changeAllowed,
  countAfter,
  freeSlots,
  type LimitChange,
  limitChange,
  mayPromote,
  type RunningCount,
  type SlotState,
} from '../../../engine/job/running-limit.js';

const count = (running: number, queued = 0, nextSeq = 0): RunningCount => ({ running, queued, nextSeq });
const state = (overrides: Partial<SlotState>): SlotState => ({
  id: 'j',
  workflow: 'w',
  status: 'running',
  ...overrides,
});

describe('Rule: maxRunning (engine/job/running-limit.ts)', () => {
  describe('Function: admit', () => {
    it('starts a job of a workflow without a limit at once, holding no slot', () => {
      expect(admit(undefined)).toEqual({ kind: 'run', slot: false });
    });

    it('takes a free slot when nobody queues before the job', () => {
      expect(admit({ max: 2, count: count(1) })).toEqual({ kind: 'run', slot: true });
    });

    it('queues the job last when every slot is taken', () => {
      expect(admit({ max: 2, count: count(2, 3, 7) })).toEqual({ kind: 'queue', seq: 7 });
    });

    it('queues the job behind others even when a slot has just been given back', () => {
      expect(admit({ max: 2, count: count(1, 1, 4) })).toEqual({ kind: 'queue', seq: 4 });
    });
  });

  describe('Function: mayPromote and freeSlots', () => {
    it('lets a queued job start while a slot is free, or once the limit is gone', () => {
      expect(mayPromote({ max: 2, count: count(1, 5) })).toBe(true);
      expect(mayPromote({ max: 2, count: count(2, 5) })).toBe(false);
      expect(mayPromote(undefined)).toBe(true);
      expect(freeSlots({ max: 3, count: count(1) })).toBe(2);
      expect(freeSlots({ max: 1, count: count(3) })).toBe(0);
      expect(freeSlots(undefined)).toBeUndefined();
    });
  });

  describe('Function: limitChange', () => {
    it('takes a slot for a job that starts holding one', () => {
      expect(limitChange(undefined, state({ holdsSlot: true }), 2)).toEqual({
        op: 'take',
        workflow: 'w',
        max: 2,
      });
    });

    it('queues a new job at its place', () => {
      expect(limitChange(undefined, state({ status: 'queued', queueSeq: 3 }), 2)).toEqual({
        op: 'enqueue',
        workflow: 'w',
        max: 2,
        seq: 3,
        jobId: 'j',
      });
    });

    it('promotes a queued job that starts holding a slot', () => {
      const before = state({ status: 'queued', queueSeq: 3 });
      expect(limitChange(before, state({ holdsSlot: true }), 2)).toEqual({
        op: 'promote',
        workflow: 'w',
        max: 2,
        seq: 3,
      });
    });

    it('takes a job out of the queue without a slot when it is cancelled, or starts without a limit', () => {
      const before = state({ status: 'queued', queueSeq: 3 });
      expect(limitChange(before, state({ status: 'cancelled' }), undefined)).toEqual({
        op: 'dequeue',
        workflow: 'w',
        seq: 3,
      });
      expect(limitChange(before, state({ status: 'running' }), undefined)).toEqual({
        op: 'dequeue',
        workflow: 'w',
        seq: 3,
      });
    });

    it('gives the slot back when a job holding one ends, whatever the limit is now', () => {
      for (const status of ['completed', 'failed', 'cancelled', 'aborted'] as const) {
        expect(limitChange(state({ holdsSlot: true }), state({ status }), undefined)).toEqual({
          op: 'release',
          workflow: 'w',
        });
      }
    });

    it('changes nothing for a job that keeps its slot, or never had one', () => {
      expect(
        limitChange(state({ holdsSlot: true }), state({ status: 'paused', holdsSlot: true }), 2),
      ).toBeUndefined();
      expect(limitChange(state({}), state({ status: 'completed' }), 2)).toBeUndefined();
      expect(limitChange(undefined, state({ status: 'completed' }), 2)).toBeUndefined();
    });
  });

  describe('Functions: changeAllowed and countAfter (what a store checks and writes)', () => {
    const cases: [string, RunningCount, LimitChange, boolean, RunningCount | undefined][] = [
      ['take with room', count(1), { op: 'take', workflow: 'w', max: 2 }, true, count(2)],
      ['take when full', count(2), { op: 'take', workflow: 'w', max: 2 }, false, undefined],
      ['take past a queue', count(1, 1, 1), { op: 'take', workflow: 'w', max: 2 }, false, undefined],
      [
        'enqueue when full',
        count(2, 0, 5),
        { op: 'enqueue', workflow: 'w', max: 2, seq: 5, jobId: 'j' },
        true,
        count(2, 1, 6),
      ],
      [
        'enqueue at a place taken meanwhile',
        count(2, 1, 6),
        { op: 'enqueue', workflow: 'w', max: 2, seq: 5, jobId: 'j' },
        false,
        undefined,
      ],
      [
        'enqueue with room and no queue',
        count(1, 0, 5),
        { op: 'enqueue', workflow: 'w', max: 2, seq: 5, jobId: 'j' },
        false,
        undefined,
      ],
      [
        'promote with room',
        count(1, 2, 9),
        { op: 'promote', workflow: 'w', max: 2, seq: 3 },
        true,
        count(2, 1, 9),
      ],
      [
        'promote when full',
        count(2, 2, 9),
        { op: 'promote', workflow: 'w', max: 2, seq: 3 },
        false,
        undefined,
      ],
      ['dequeue', count(2, 2, 9), { op: 'dequeue', workflow: 'w', seq: 3 }, true, count(2, 1, 9)],
      ['release', count(2, 2, 9), { op: 'release', workflow: 'w' }, true, count(1, 2, 9)],
    ];
    it.each(cases)('%s', (_name, before, change, allowed, after) => {
      expect(changeAllowed(before, change)).toBe(allowed);
      if (after) expect(countAfter(before, change)).toEqual(after);
    });
  });

  describe('Definition key: maxRunning', () => {
    const yaml = (value: string) =>
      `workflows:\n  - name: w\n    maxRunning: ${value}\n    steps:\n      - name: a\n`;
    const errorsOf = (value: string) =>
      loadWorkflows(yaml(value), { file: 'flows.yaml' }).errors.map(formatDefinitionError);

    it('reads a whole number of at least 1', () => {
      const { workflows, errors } = loadWorkflows(yaml('3'));
      expect(errors).toEqual([]);
      expect(workflows[0]?.maxRunning).toBe(3);
    });

    it.each([
      ['0', '0'],
      ['-1', '-1'],
      ['1.5', '1.5'],
      ['"2"', '"2"'],
    ])('refuses maxRunning: %s with the path and the value', (value, shown) => {
      expect(errorsOf(value)).toEqual([
        `flows.yaml:3: workflow "w": "maxRunning" must be a whole number of at least 1 (the most jobs running at once), got ${shown}`,
      ]);
    });
  });
});
