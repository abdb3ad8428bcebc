import { describe, expect, it } from 'vitest';
import { requestStillOpen } from '../../../engine/job/open-request.js';
import type { JobStatus, StepState, StepStatus } from '../../../engine/job/types.js';
import { aJob } from '../../support/factories.js';

const jobWith = (status: JobStatus, step: Partial<StepState> & { status: StepStatus }) =>
  aJob({ status, steps: [{ name: 'charge', attempts: 2, firstAttempt: 1, ...step }] });

describe('Rules: a request still of use to its job', () => {
  it('is open while its step runs that very attempt, in a running or paused job', () => {
    expect(requestStillOpen(jobWith('running', { status: 'running' }), { step: 'charge', attempt: 2 })).toBe(
      true,
    );
    expect(requestStillOpen(jobWith('paused', { status: 'running' }), { step: 'charge', attempt: 2 })).toBe(
      true,
    );
  });

  it('is closed once its job ended, whatever its step says', () => {
    for (const status of ['completed', 'failed', 'cancelled', 'aborted'] as const)
      expect(requestStillOpen(jobWith(status, { status: 'running' }), { step: 'charge', attempt: 2 })).toBe(
        false,
      );
  });

  it('is closed once its attempt was answered, timed out or cancelled, or a later one started', () => {
    for (const status of ['completed', 'failed', 'suspended', 'cancelled', 'waiting'] as const)
      expect(requestStillOpen(jobWith('running', { status }), { step: 'charge', attempt: 2 })).toBe(false);
    expect(requestStillOpen(jobWith('running', { status: 'running' }), { step: 'charge', attempt: 1 })).toBe(
      false,
    );
  });

  it("is open for an attempt its job's state has not reached, or a step it does not have", () => {
    expect(requestStillOpen(jobWith('running', { status: 'failed' }), { step: 'charge', attempt: 3 })).toBe(
      true,
    );
    expect(requestStillOpen(jobWith('running', { status: 'running' }), { step: 'ship', attempt: 1 })).toBe(
      true,
    );
  });
});
