import type { JobSummary } from './job-document.js';

/**
 * What a job's clock measures, by its status, for the CLI and the dashboard alike: a scheduled job
 * has not started (it starts at its time), a queued or pending one waits (since it was created), a
 * running one (or one waiting for someone: it runs) runs (since its first step was sent: not since a delayed start was asked for, nor
 * through its wait in the queue), a paused one is paused (since it was paused, after running for a
 * while), and an ended one took the time from its run's start to its end (none if it never ran).
 */
export type JobClock =
  | { phase: 'scheduled'; startsAt: number }
  | { phase: 'queued' | 'pending'; since: number }
  | { phase: 'running'; since: number }
  | { phase: 'paused'; since: number; ranMs?: number }
  | { phase: 'ended'; tookMs?: number };

type Timed = Pick<
  JobSummary,
  'status' | 'createdAt' | 'updatedAt' | 'startAt' | 'startedAt' | 'pausedAt' | 'endedAt'
> & {
  /** A job document's steps: their first start is the run's, from a server that did not say it. */
  steps?: Record<string, { startedAt?: string }>;
};

const ms = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const at = Date.parse(iso);
  return Number.isNaN(at) ? undefined : at;
};

export function jobClock(job: Timed): JobClock {
  const created = ms(job.createdAt) ?? 0;
  const started = ms(job.startedAt) ?? firstStepStart(job.steps) ?? ms(job.startAt);
  const status = job.status;
  switch (status) {
    case 'scheduled':
      return { phase: 'scheduled', startsAt: ms(job.startAt) ?? created };
    case 'queued':
    case 'pending':
      return { phase: status, since: created };
    case 'running':
    case 'waiting':
      return { phase: 'running', since: started ?? created };
    case 'paused': {
      const since = ms(job.pausedAt) ?? ms(job.updatedAt) ?? created;
      return started === undefined
        ? { phase: 'paused', since }
        : { phase: 'paused', since, ranMs: since - started };
    }
    case 'completed':
    case 'failed':
    case 'cancelled':
    case 'aborted': {
      const end = ms(job.endedAt) ?? ms(job.updatedAt) ?? created;
      if (started !== undefined) return { phase: 'ended', tookMs: Math.max(0, end - started) };
      // Nothing was sent: every step skipped (it took no time), or it ended before it ran.
      return status === 'completed' ? { phase: 'ended', tookMs: 0 } : { phase: 'ended' };
    }
    default: {
      // A status this version does not know (a newer server's): its age, as a running job's.
      status satisfies never;
      return { phase: 'running', since: created };
    }
  }
}

function firstStepStart(steps: Timed['steps']): number | undefined {
  let first: number | undefined;
  for (const step of Object.values(steps ?? {})) {
    const at = ms(step.startedAt);
    if (at !== undefined && (first === undefined || at < first)) first = at;
  }
  return first;
}
