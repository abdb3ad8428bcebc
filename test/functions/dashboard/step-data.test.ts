import { describe, expect, it } from 'vitest';
import type { JobDocument } from '../../../functions/dashboard/src/api-types.js';
import { stepInput, stepOutput } from '../../../functions/dashboard/src/step-data.js';

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
