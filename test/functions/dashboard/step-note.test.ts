import { describe, expect, it } from 'vitest';
import type { StepView } from '../../../functions/dashboard/src/api-types.js';
import { defaultStep, stepNote } from '../../../functions/dashboard/src/step-note.js';

const NOW = Date.parse('2024-05-01T12:00:10.000Z');
const at = (secondsBefore: number) => new Date(NOW - secondsBefore * 1000).toISOString();

describe('Function: stepNote', () => {
  it.each<[string, StepView, string]>([
    ['waiting', { status: 'waiting', attempt: 0, attempts: [] }, 'waiting'],
    ['waiting to retry', { status: 'waiting', attempt: 1, attempts: [], retryAt: at(-20) }, 'retry in 20 s'],
    ['running', { status: 'running', attempt: 1, attempts: [], startedAt: at(4) }, 'running 4.0 s'],
    [
      'running again',
      { status: 'running', attempt: 2, attempts: [], startedAt: at(4) },
      'running 4.0 s · attempt 2',
    ],
    [
      'fanning out',
      { status: 'running', attempt: 1, attempts: [], children: 12, childrenDone: 7, childrenFailed: 1 },
      '7/12 children · 1 failed',
    ],
    [
      'completed',
      { status: 'completed', attempt: 1, attempts: [], startedAt: at(3), endedAt: at(1) },
      'completed in 2.0 s',
    ],
    [
      'fanned out',
      { status: 'completed', attempt: 1, attempts: [], children: 3, startedAt: at(3), endedAt: at(1) },
      '3 children in 2.0 s',
    ],
    ['failed', { status: 'failed', attempt: 3, attempts: [] }, 'failed after 3 attempts'],
    ['cancelled', { status: 'cancelled', attempt: 1, attempts: [] }, 'cancelled'],
  ])('%s', (_, view, expected) => {
    expect(stepNote(view, NOW)).toBe(expected);
  });
});

describe('Function: stepNote, for steps that wait for someone', () => {
  it('says a signal step waits for its signal, since when', () => {
    const view: StepView = { status: 'running', attempt: 1, attempts: [], startedAt: at(8) };
    expect(stepNote(view, NOW, undefined, { step: 'approve', kind: 'signal', since: at(8) })).toBe(
      'waiting for signal · 8.0 s',
    );
  });

  it('says until when a sleep: step sleeps', () => {
    const wakes = new Date(NOW + 10 * 60_000).toISOString();
    const view: StepView = { status: 'running', attempt: 1, attempts: [], sleepingUntil: wakes };
    expect(stepNote(view, NOW)).toBe(
      `sleeping until ${wakes.slice(0, 19).replace('T', ' ')} UTC (in 10 min)`,
    );
  });

  it("gives a suspended step its worker's note, or says it waits for a signal", () => {
    const view: StepView = { status: 'suspended', attempt: 1, attempts: [], suspendNote: 'ask finance' };
    expect(stepNote(view, NOW)).toBe('suspended: ask finance');
    expect(stepNote({ ...view, suspendNote: undefined }, NOW)).toBe('suspended · waits for a signal');
  });

  it('says a call waits for a paused job', () => {
    const view: StepView = { status: 'running', attempt: 1, attempts: [], calledStatus: 'paused' };
    expect(stepNote(view, NOW, undefined, { step: 'pay', kind: 'paused-call', since: at(1), job: 'x' })).toBe(
      'its called job is paused',
    );
  });

  it('says on which attempt a step completed', () => {
    const view: StepView = {
      status: 'completed',
      attempt: 3,
      attempts: [],
      startedAt: at(3),
      endedAt: at(1),
    };
    expect(stepNote(view, NOW)).toBe('completed in 2.0 s · attempt 3');
  });
});

describe('Function: defaultStep', () => {
  const completed = (...names: string[]) => names.map((name) => ({ name, startTime: at(1), message: {} }));

  it('shows a failed step first, then a running one, then the last to complete', () => {
    expect(
      defaultStep({
        steps: {
          a: { status: 'running', attempt: 1, attempts: [] },
          b: { status: 'failed', attempt: 1, attempts: [] },
        },
        completed: completed('__start__'),
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: {
          a: { status: 'completed', attempt: 1, attempts: [] },
          b: { status: 'running', attempt: 1, attempts: [] },
        },
        completed: completed('__start__', 'a'),
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: {
          a: { status: 'completed', attempt: 1, attempts: [] },
          b: { status: 'completed', attempt: 1, attempts: [] },
        },
        completed: completed('__start__', 'b', 'a', '__end__'),
      }),
    ).toBe('a');
    expect(
      defaultStep({ steps: { a: { status: 'waiting', attempt: 0, attempts: [] } }, completed: [] }),
    ).toBe('a');
  });
});

describe('Function: stepNote, control flow', () => {
  it('says why a step was skipped: its condition from the definition, else the reason recorded', () => {
    const skipped: StepView = {
      status: 'skipped',
      attempt: 0,
      attempts: [],
      skipReason: '"when" is false: input.total > 100',
    };
    expect(stepNote(skipped, NOW, { when: 'input.total > 100' })).toBe(
      'skipped · input.total > 100 is false',
    );
    expect(stepNote(skipped, NOW)).toBe('skipped · "when" is false: input.total > 100');
    expect(
      stepNote(
        { status: 'skipped', attempt: 0, attempts: [], skipReason: 'every step it depends on was skipped' },
        NOW,
        {
          when: 'input.total > 100',
        },
      ),
    ).toBe('skipped · every step it depends on was skipped');
    expect(stepNote({ status: 'skipped', attempt: 0, attempts: [] }, NOW)).toBe('skipped');
  });

  it('tells a handled failure from one that failed the job', () => {
    expect(
      stepNote({ status: 'failed', attempt: 2, attempts: [], handled: true, error: 'declined' }, NOW),
    ).toBe('failed · handled');
    expect(stepNote({ status: 'failed', attempt: 2, attempts: [], error: 'declined' }, NOW)).toBe(
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
          a: { status: 'failed', attempt: 1, attempts: [], handled: true },
          b: { status: 'failed', attempt: 1, attempts: [] },
          c: { status: 'completed', attempt: 1, attempts: [] },
        },
        completed,
      }),
    ).toBe('b');
    expect(
      defaultStep({
        steps: {
          a: { status: 'failed', attempt: 1, attempts: [], handled: true },
          s: { status: 'skipped', attempt: 0, attempts: [] },
          c: { status: 'completed', attempt: 1, attempts: [] },
        },
        completed,
      }),
    ).toBe('a');
  });
});
