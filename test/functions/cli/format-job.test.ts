import { describe, expect, it } from 'vitest';
import type { JobDocument } from '../../../functions/api/job-document.js';
import { formatJob, progressLine } from '../../../functions/cli/format-job.js';

const CREATED = '2026-01-01T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(CREATED) + seconds * 1000).toISOString();

/** A finished checkout: a handled failure, a skipped step, a call to another workflow's job. */
function checkout(overrides: Partial<JobDocument> = {}): JobDocument {
  return {
    uuid: 'job-1',
    workflow: 'checkout',
    version: 2,
    parent: null,
    index: null,
    task: null,
    status: 'completed',
    input: { total: 40 },
    createdAt: CREATED,
    updatedAt: at(3),
    endedAt: at(3),
    steps: {
      charge: {
        status: 'failed',
        attempt: 2,
        attempts: [],
        startedAt: at(0),
        endedAt: at(1),
        error: 'card declined',
        handled: true,
        input: { total: 40, currency: 'EUR' },
      },
      'big-order': {
        status: 'skipped',
        attempt: 0,
        attempts: [],
        endedAt: at(0),
        skipReason: '"when" is false: input.total > 100',
      },
      refund: {
        status: 'completed',
        attempt: 1,
        attempts: [],
        startedAt: at(1),
        endedAt: at(2),
        job: 'job-1.refund.1',
      },
      notify: { status: 'completed', attempt: 1, attempts: [], startedAt: at(2), endedAt: at(2.5) },
    },
    running: [],
    completed: [],
    result: { refunded: true },
    ...overrides,
  };
}

describe('Function: formatJob', () => {
  it('shows a handled failure, a skipped step with its reason and the job a workflow: step called', () => {
    // Act
    const text = formatJob(checkout());

    // Assess
    expect(text.split('\n').slice(0, 5)).toEqual([
      'job job-1  checkout v2  completed  (3.0s)',
      '  ✗ charge     failed · handled  2 attempts, 1.0s, error: card declined',
      '  ↷ big-order  skipped           "when" is false: input.total > 100',
      '  ✓ refund     completed         called job job-1.refund.1, 1.0s',
      '  ✓ notify     completed         500ms',
    ]);
  });

  it('links the job that called this one, the failed job it follows up, and its own follow-up', () => {
    const text = formatJob(
      checkout({
        status: 'failed',
        calledBy: { id: 'parent-job', step: 'pay', attempt: 2 },
        causedBy: 'failed-job',
        followUp: 'follow-up-job',
      }),
    );
    expect(text.split('\n').slice(0, 4)).toEqual([
      'job job-1  checkout v2  failed  (3.0s)',
      '  called by job parent-job, step pay (attempt 2)',
      '  started because job failed-job failed',
      '  on failure: started job follow-up-job',
    ]);
  });

  it('keeps its columns for a job without skipped or handled steps', () => {
    const text = formatJob(
      checkout({
        steps: {
          a: { status: 'failed', attempt: 1, attempts: [], error: 'boom' },
          bb: { status: 'waiting', attempt: 0, attempts: [] },
        },
        result: undefined,
      }),
    );
    expect(text.split('\n').slice(1)).toEqual(['  ✗ a     failed     error: boom', '  ○ bb    waiting']);
  });
});

describe('Function: progressLine', () => {
  it('counts completed, skipped and handled steps as done, and says how many were skipped or handled', () => {
    const line = progressLine(checkout(), 8);
    expect(line).toBe('[########] 4/4 steps done (1 skipped, 1 failure handled), 3.0s  completed');
  });

  it('does not count a failure nobody handled', () => {
    const line = progressLine(
      checkout({
        status: 'failed',
        steps: {
          a: { status: 'completed', attempt: 1, attempts: [] },
          b: { status: 'failed', attempt: 1, attempts: [], error: 'boom' },
          c: { status: 'skipped', attempt: 0, attempts: [] },
          d: { status: 'waiting', attempt: 0, attempts: [] },
        },
      }),
      8,
    );
    expect(line).toBe('[####----] 2/4 steps done (1 skipped), 3.0s  failed');
  });
});
