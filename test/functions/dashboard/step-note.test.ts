import { describe, expect, it } from 'vitest';
import type { StepView } from '../../../functions/dashboard/src/api-types.js';
import { defaultStep, stepNote } from '../../../functions/dashboard/src/step-note.js';

const NOW = Date.parse('2024-05-01T12:00:10.000Z');
const at = (secondsBefore: number) => new Date(NOW - secondsBefore * 1000).toISOString();

describe('Function: stepNote', () => {
  it.each<[string, StepView, string]>([
    ['waiting', { status: 'waiting', attempts: 0 }, 'waiting'],
    ['waiting to retry', { status: 'waiting', attempts: 1, retryAt: at(-20) }, 'retry in 20 s'],
    ['running', { status: 'running', attempts: 1, startedAt: at(4) }, 'running 4.0 s'],
    ['running again', { status: 'running', attempts: 2, startedAt: at(4) }, 'running 4.0 s · attempt 2'],
    [
      'fanning out',
      { status: 'running', attempts: 1, children: 12, childrenDone: 7, childrenFailed: 1 },
      '7/12 children · 1 failed',
    ],
    [
      'completed',
      { status: 'completed', attempts: 1, startedAt: at(3), endedAt: at(1) },
      'completed in 2.0 s',
    ],
    [
      'fanned out',
      { status: 'completed', attempts: 1, children: 3, startedAt: at(3), endedAt: at(1) },
      '3 children in 2.0 s',
    ],
    ['failed', { status: 'failed', attempts: 3 }, 'failed after 3 attempts'],
    ['cancelled', { status: 'cancelled', attempts: 1 }, 'cancelled'],
  ])('%s', (_, view, expected) => {
    expect(stepNote(view, NOW)).toBe(expected);
  });
});

describe('Function: defaultStep', () => {
  const completed = (...names: string[]) => names.map((name) => ({ name, startTime: at(1), message: {} }));

  it('shows a failed step first, then a running one, then the last to complete', () => {
    expect(
      defaultStep({
        steps: { a: { status: 'running', attempts: 1 }, b: { status: 'failed', attempts: 1 } },
        completed: completed('__start__'),
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: { a: { status: 'completed', attempts: 1 }, b: { status: 'running', attempts: 1 } },
        completed: completed('__start__', 'a'),
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: { a: { status: 'completed', attempts: 1 }, b: { status: 'completed', attempts: 1 } },
        completed: completed('__start__', 'b', 'a', '__end__'),
      }),
    ).toBe('a');
    expect(defaultStep({ steps: { a: { status: 'waiting', attempts: 0 } }, completed: [] })).toBe('a');
  });
});

describe('Function: stepNote, control flow', () => {
  it('says why a step was skipped: its condition from the definition, else the reason recorded', () => {
    const skipped: StepView = {
      status: 'skipped',
      attempts: 0,
      skipReason: '"when" is false: input.total > 100',
    };
    expect(stepNote(skipped, NOW, { when: 'input.total > 100' })).toBe(
      'skipped · input.total > 100 is false',
    );
    expect(stepNote(skipped, NOW)).toBe('skipped · "when" is false: input.total > 100');
    expect(
      stepNote({ status: 'skipped', attempts: 0, skipReason: 'every step it depends on was skipped' }, NOW, {
        when: 'input.total > 100',
      }),
    ).toBe('skipped · every step it depends on was skipped');
    expect(stepNote({ status: 'skipped', attempts: 0 }, NOW)).toBe('skipped');
  });

  it('tells a handled failure from one that failed the job', () => {
    expect(stepNote({ status: 'failed', attempts: 2, handled: true, error: 'declined' }, NOW)).toBe(
      'failed · handled',
    );
    expect(stepNote({ status: 'failed', attempts: 2, error: 'declined' }, NOW)).toBe(
      'failed after 2 attempts',
    );
  });
});

describe('Function: defaultStep, control flow', () => {
  it('shows the failure that failed the job before a handled one, and a handled one before completed steps', () => {
    const completed = [{ name: 'c', startTime: at(1), message: {} }];
    expect(
      defaultStep({
        steps: {
          a: { status: 'failed', attempts: 1, handled: true },
          b: { status: 'failed', attempts: 1 },
          c: { status: 'completed', attempts: 1 },
        },
        completed,
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: {
          a: { status: 'failed', attempts: 1, handled: true },
          s: { status: 'skipped', attempts: 0 },
          c: { status: 'completed', attempts: 1 },
        },
        completed,
      }),
    ).toBe('a');
  });
});
