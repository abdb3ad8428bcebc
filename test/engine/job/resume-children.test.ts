import { describe, expect, it } from 'vitest';
import { resetOnResume, resumeFanOut } from '../../../engine/job/resume-children.js';
import type { JobStatus } from '../../../engine/job/types.js';

describe('Rules: resuming the children of a retried fan-out step', () => {
  it('resets failed and cancelled children, and keeps the others', () => {
    const reset = (['waiting', 'running', 'completed', 'failed', 'cancelled'] as const).filter(resetOnResume);
    expect(reset).toEqual(['failed', 'cancelled']);
  });

  it('recounts the completed children, with no failures, and starts each slot on its next child', () => {
    const statuses: JobStatus[] = ['completed', 'waiting', 'waiting', 'completed', 'waiting'];
    expect(resumeFanOut(statuses, { total: 5, concurrency: 2 })).toEqual({
      counts: { total: 5, done: 2, failed: 0 },
      fanIn: false,
      starts: [2, 1],
    });
  });

  it('starts every reset child of a fan-out without a limit', () => {
    const statuses: JobStatus[] = ['waiting', 'completed', 'waiting'];
    expect(resumeFanOut(statuses, { total: 3, concurrency: Number.POSITIVE_INFINITY })).toEqual({
      counts: { total: 3, done: 1, failed: 0 },
      fanIn: false,
      starts: [0, 2],
    });
  });

  it('fans in at once when every child had completed', () => {
    expect(resumeFanOut(['completed', 'completed'], { total: 2, concurrency: 1 })).toEqual({
      counts: { total: 2, done: 2, failed: 0 },
      fanIn: true,
    });
  });

  it('leaves a slot alone whose next child is missing', () => {
    const statuses: (JobStatus | undefined)[] = ['completed', undefined, 'waiting'];
    expect(resumeFanOut(statuses, { total: 4, concurrency: 2 })).toEqual({
      counts: { total: 4, done: 1, failed: 0 },
      fanIn: false,
      starts: [2],
    });
  });
});
