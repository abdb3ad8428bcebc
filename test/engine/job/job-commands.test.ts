import { describe, expect, it } from 'vitest';
import {
  actsOnRoot,
  callFinishedEvent,
  childCommand,
  failedChildEntry,
  fanOutOpen,
  followParentEvent,
  isSameStart,
  mayStartJob,
} from '../../../engine/job/job-commands.js';
import { JOB_STATUSES, type JobStatus } from '../../../engine/job/types.js';
import { aJob } from '../../support/factories.js';

// The rules the manager carries out across jobs (engine/job/job-commands.ts): which jobs a command
// or a cascade acts on, and what each gets.

describe('Commands on a tree', () => {
  it('cancel, pause, resume and retry act on the root; a signal on the job it names', () => {
    expect((['cancel', 'pause', 'resume', 'retry'] as const).map(actsOnRoot)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(actsOnRoot('signal')).toBe(false);
  });

  it.each([
    ['cancel', ['running', 'paused']],
    ['pause', ['running']],
    ['resume', ['paused']],
  ] as const)('a fan-out step’s %s reaches only children that are %j', (command, reached) => {
    for (const status of JOB_STATUSES) {
      const event = childCommand(command, status);
      expect(event === undefined ? undefined : event.type, status).toBe(
        (reached as readonly JobStatus[]).includes(status) ? command : undefined,
      );
    }
  });

  it('children follow their parent as it is now, and nothing follows an ended one', () => {
    expect(followParentEvent('paused', 'paused')).toBeUndefined();
    expect(followParentEvent('running', 'paused')).toEqual({ type: 'resume' });
    expect(followParentEvent('paused', 'running')).toEqual({ type: 'pause' });
    for (const ended of ['completed', 'failed', 'cancelled', 'aborted'] as const) {
      expect(followParentEvent(ended, 'running')).toBeUndefined();
    }
    expect(followParentEvent(undefined, 'running')).toBeUndefined();
  });

  it('a fan-out step takes its children’s ends while its job runs or is paused and the step runs', () => {
    const parent = (status: JobStatus, step: 'running' | 'completed') =>
      aJob({ status, steps: [{ name: 'fan', status: step, attempts: 1, firstAttempt: 1 }] });
    expect(fanOutOpen(parent('running', 'running'), 'fan')).toBe(true);
    expect(fanOutOpen(parent('paused', 'running'), 'fan')).toBe(true);
    expect(fanOutOpen(parent('cancelled', 'running'), 'fan')).toBe(false);
    expect(fanOutOpen(parent('running', 'completed'), 'fan')).toBe(false);
    expect(fanOutOpen(undefined, 'fan')).toBe(false);
  });
});

describe('Calls and fan-ins', () => {
  const followUp = { kind: 'callFinished' as const, jobId: 'c', callerId: 'p', step: 'ship', attempt: 2 };

  it('an aborted called job is a failed call; a running one says nothing yet', () => {
    const aborted = aJob({ status: 'aborted', error: { step: 'x', attempt: 1, message: 'no stock', at: 5 } });
    expect(callFinishedEvent(followUp, aborted)).toMatchObject({
      type: 'callFinished',
      step: 'ship',
      attempt: 2,
      status: 'failed',
      message: 'no stock',
    });
    const done = aJob({ status: 'completed', result: { shipped: true } });
    expect(callFinishedEvent(followUp, done)).toMatchObject({
      status: 'completed',
      result: { shipped: true },
    });
    expect(callFinishedEvent(followUp, aJob({ status: 'running' }))).toBeUndefined();
  });

  it('a failed child’s entry in a continueOnError list names its step, error, attempts, time and id', () => {
    const child = aJob({
      status: 'failed',
      error: { step: 'charge', attempt: 3, message: 'declined', at: 42 },
    });
    expect(failedChildEntry(child, 'each')).toEqual({
      step: 'charge',
      message: 'declined',
      attempts: 3,
      at: 42,
      child: child.id,
    });
    const silent = aJob({ status: 'failed', updatedAt: 7 });
    expect(failedChildEntry(silent, 'each')).toMatchObject({
      step: 'each',
      message: 'the child job failed',
      attempts: 0,
      at: 7,
    });
  });
});

describe('Starts', () => {
  it('a start sent again is the same job only for the same workflow and input (key order aside), at the top level', () => {
    const job = aJob({ workflow: 'billing', input: { a: 1, b: 2 } });
    expect(isSameStart(job, 'billing', { b: 2, a: 1 })).toBe(true);
    expect(isSameStart(job, 'billing', { a: 1 })).toBe(false);
    expect(isSameStart(job, 'orders', { a: 1, b: 2 })).toBe(false);
    const child = aJob({
      workflow: 'billing',
      input: { a: 1, b: 2 },
      parent: { id: 'p', step: 's', index: 0 },
    });
    expect(isSameStart(child, 'billing', { a: 1, b: 2 })).toBe(false);
  });

  it('promote, retry and a delayed start’s timer may start a top-level job under maxRunning; nothing else', () => {
    expect(mayStartJob({ type: 'promote' })).toBe(true);
    expect(mayStartJob({ type: 'retry' })).toBe(true);
    expect(
      mayStartJob({ type: 'timer', timer: { jobId: 'j', step: null, kind: 'start', attempt: 0, at: 1 } }),
    ).toBe(true);
    expect(
      mayStartJob({ type: 'timer', timer: { jobId: 'j', step: 's', kind: 'attempt', attempt: 1, at: 1 } }),
    ).toBe(false);
    expect(mayStartJob({ type: 'cancel' })).toBe(false);
  });
});
