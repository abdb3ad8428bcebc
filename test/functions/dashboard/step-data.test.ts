import { describe, expect, it } from 'vitest';
import type { JobDocument } from '../../../functions/dashboard/src/api-types.js';
import { sentInput, stepInput, stepOutput } from '../../../functions/dashboard/src/step-data.js';

const JOB: Pick<JobDocument, 'input' | 'completed'> = {
  input: { book: 'alice.txt' },
  completed: [
    { name: '__start__', startTime: '2024-05-01T12:00:00Z', message: { book: 'alice.txt' } },
    {
      name: 'split',
      startTime: '2024-05-01T12:00:00Z',
      elapsed: 1,
      message: { sections: [1, 2], shared: 'split' },
    },
    {
      name: 'title',
      startTime: '2024-05-01T12:00:00Z',
      elapsed: 1,
      message: { title: 'Alice', shared: 'title' },
    },
  ],
};

describe('Function: stepInput', () => {
  it('gives a step without depends the job input', () => {
    expect(stepInput(JOB, {})).toEqual({ book: 'alice.txt' });
  });

  it('merges the outputs of the steps it depends on, the first to have a key winning', () => {
    expect(stepInput(JOB, { depends: ['title', 'split'] })).toEqual({
      title: 'Alice',
      shared: 'title',
      sections: [1, 2],
    });
  });

  it('is unknown while a step it depends on has no output', () => {
    expect(stepInput(JOB, { depends: ['split', 'sum'] })).toBeUndefined();
  });
});

describe('Function: stepOutput', () => {
  it("reads a completed step's message", () => {
    expect(stepOutput(JOB, 'title')).toEqual({ title: 'Alice', shared: 'title' });
    expect(stepOutput(JOB, 'sum')).toBeUndefined();
  });
});

describe('Functions: step data with skipped steps, handled failures and recorded input', () => {
  const ended = '2024-05-01T12:00:02.000Z';
  const job: Pick<JobDocument, 'input' | 'completed' | 'steps'> = {
    input: { total: 40 },
    completed: [
      { name: '__start__', startTime: '2024-05-01T12:00:00Z', message: { total: 40 } },
      { name: 'load', startTime: '2024-05-01T12:00:00Z', elapsed: 1, message: { orderId: 7 } },
    ],
    steps: {
      load: { status: 'completed', attempt: 1, attempts: [] },
      charge: {
        status: 'failed',
        attempt: 2,
        attempts: [],
        handled: true,
        error: 'card declined',
        endedAt: ended,
      },
      big: { status: 'skipped', attempt: 0, attempts: [], skipReason: '"when" is false: input.total > 100' },
      ship: { status: 'completed', attempt: 1, attempts: [], input: { orderId: 7, currency: 'EUR' } },
      refund: { status: 'running', attempt: 1, attempts: [] },
    },
  };

  it("gives a handled failure's output as the error it handed on", () => {
    expect(stepOutput(job, 'charge')).toEqual({
      error: { step: 'charge', message: 'card declined', attempts: 2, at: Date.parse(ended) },
    });
  });

  it('merges completed and handled outputs, leaves skipped steps out, and knows no input for a skipped step', () => {
    expect(stepInput(job, { name: 'refund', depends: ['big', 'charge', 'load'] })).toEqual({
      error: { step: 'charge', message: 'card declined', attempts: 2, at: Date.parse(ended) },
      orderId: 7,
    });
    expect(stepInput(job, { name: 'after-big', depends: ['big'] })).toBeUndefined();
    expect(stepInput(job, { name: 'big', depends: ['load'] })).toBeUndefined();
    expect(stepInput(job, { name: 'late', depends: ['load', 'refund'] })).toBeUndefined();
  });

  it('shows what was sent: the recorded input when there is one, else the merged input', () => {
    expect(sentInput(job, { name: 'ship', depends: ['load'] })).toEqual({
      value: { orderId: 7, currency: 'EUR' },
      recorded: true,
    });
    expect(sentInput(job, { name: 'refund', depends: ['load'] })).toEqual({
      value: { orderId: 7 },
      recorded: false,
    });
    expect(sentInput(job, { name: 'big', depends: ['load'] })).toBeUndefined();
  });
});
