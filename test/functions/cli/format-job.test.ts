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
          a: { status: 'completed', attempt: 1, attempts: [], startedAt: CREATED },
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

/** A running approval: `check`'s worker suspended it 588 s ago, 38 ms after it was sent; `approve` waits for its signal. */
function approval(): JobDocument {
  return {
    ...checkout({ status: 'running', endedAt: undefined, result: undefined }),
    uuid: '3f0c9a52-8a55-4f5e-9d43-1c2f1f3a6b7e',
    startedAt: at(0),
    steps: {
      check: {
        status: 'suspended',
        attempt: 1,
        attempts: [{ attempt: 1, sentAt: at(0), endedAt: at(0.038), outcome: 'suspended' }],
        startedAt: at(0),
        suspendNote: 'waiting for finance',
      },
      approve: { status: 'running', attempt: 1, attempts: [], startedAt: at(1) },
    },
    waitingFor: [
      { step: 'check', kind: 'suspended', since: at(0.038), note: 'waiting for finance' },
      { step: 'approve', kind: 'signal', since: at(1) },
    ],
  };
}

describe('Function: formatJob, steps that wait for someone', () => {
  const now = Date.parse(at(588.038));
  const steps = new Map([
    ['check', { kind: 'worker' as const, queue: 'check' }],
    ['approve', { kind: 'signal' as const }],
  ]);

  it('says a suspended step is suspended, since when and why, and how long its worker took to answer', () => {
    const lines = formatJob(approval(), { steps, now }).split('\n');
    expect(lines[1]).toBe(
      '  ◌ check    suspended           for 9m 48s: waiting for finance, worker answered suspend after 38ms',
    );
    expect(lines[2]).toBe('  ◌ approve  waiting for signal  for 9m 47s');
    expect(lines.join('\n')).not.toMatch(/from sent to reply/);
  });

  it('says until when a sleep: step sleeps, and which iteration a loop runs', () => {
    const job = approval();
    job.steps.check = {
      status: 'running',
      attempt: 1,
      attempts: [],
      startedAt: at(1),
      sleepingUntil: at(-60),
    };
    job.steps.approve = { status: 'running', attempt: 3, attempts: [], startedAt: at(1), iterations: 2 };
    job.waitingFor = undefined;
    const text = formatJob(job, { now });
    expect(text).toContain(`sleeping until ${at(-60)}`);
    expect(text).toContain('running (iteration 3)');
  });

  it('ends with the command that lets each go on, naming the namespace when it is not the default', () => {
    const text = formatJob(approval(), { steps, now, namespace: 'team-a' });
    expect(text.split('\n').slice(3)).toEqual([
      'waiting for someone:',
      "  check (suspended 9m 48s: waiting for finance)  →  switchyard signal 3f0c9a52-8a55-4f5e-9d43-1c2f1f3a6b7e check --input '{}' --namespace team-a",
      "  approve (waiting for its signal 9m 47s)  →  switchyard signal 3f0c9a52-8a55-4f5e-9d43-1c2f1f3a6b7e approve --input '{}' --namespace team-a",
    ]);
  });

  it('names the paused job a call waits for, and the resume that lets it go on', () => {
    const job: JobDocument = {
      ...approval(),
      steps: {
        pay: {
          status: 'running',
          attempt: 1,
          attempts: [],
          startedAt: at(0),
          job: 'c0ffee00-0000-4000-8000-000000000001',
          calledStatus: 'paused',
        },
      },
      waitingFor: [
        { step: 'pay', kind: 'paused-call', since: at(60), job: 'c0ffee00-0000-4000-8000-000000000001' },
      ],
    };
    const lines = formatJob(job, { now: Date.parse(at(120)) }).split('\n');
    expect(lines[1]).toContain('called job c0ffee00-0000-4000-8000-000000000001 (paused)');
    expect(lines.at(-1)).toBe(
      '  pay (its job c0ffee00 is paused 1m 00s)  →  switchyard resume c0ffee00-0000-4000-8000-000000000001',
    );
  });

  it('gives each status its clock: a scheduled job starts, a queued one waits, a paused one is paused after it ran', () => {
    const header = (overrides: Partial<JobDocument>) =>
      formatJob(checkout({ endedAt: undefined, result: undefined, ...overrides }), {
        now: Date.parse(at(600)),
      }).split('\n')[0];
    expect(header({ status: 'scheduled', startAt: at(840), steps: {} })).toBe(
      'job job-1  checkout v2  scheduled  (starts in 4m 00s)',
    );
    expect(header({ status: 'queued', steps: {} })).toBe('job job-1  checkout v2  queued  (queued 10m 00s)');
    expect(header({ status: 'paused', startedAt: at(0), pausedAt: at(12) })).toBe(
      'job job-1  checkout v2  paused  (paused 9m 48s (ran 12.0s))',
    );
    expect(header({ status: 'running', startAt: at(590), startedAt: at(590) })).toBe(
      'job job-1  checkout v2  running  (running 10.0s)',
    );
    expect(header({ status: 'cancelled', endedAt: at(30), steps: {} })).toBe(
      'job job-1  checkout v2  cancelled  (never ran)',
    );
  });

  it('progress says that steps wait for someone', () => {
    expect(progressLine(approval(), 8, Date.parse(at(10)))).toBe(
      '[--------] 0/2 steps done, running 10.0s  running · 2 steps wait for someone',
    );
  });
});
