import type { Draft } from './draft.js';
import {
  admit,
  type LimitChange,
  limitChange,
  mayPromote,
  releasesSlot,
  type SlotState,
} from './running-limit.js';
import { startJob } from './steps.js';

/**
 * A top-level job that is to run (new, or retried) starts under its workflow's `maxRunning`
 * (running-limit.ts): at once, taking a slot when there is a limit, or queued last.
 */
export function admitJob(d: Draft): void {
  const admission = admit(d.context.runningLimit);
  if (admission.kind === 'queue') {
    d.updateJob({ status: 'queued', queueSeq: admission.seq });
    d.effects.notes.push({ kind: 'jobQueued', jobId: d.job.id });
    return;
  }
  if (admission.slot) d.updateJob({ holdsSlot: true });
  startJob(d);
}

/** A queued job whose turn came takes a slot (none when its workflow has no limit now) and starts. */
export function promoteJob(d: Draft): void {
  if (d.job.status !== 'queued') return d.ignore(`job is ${d.job.status}, not queued`);
  const limit = d.context.runningLimit;
  if (!mayPromote(limit)) return d.ignore('no slot is free');
  d.updateJob({ status: 'waiting', queueSeq: undefined, holdsSlot: limit ? true : undefined });
  startJob(d);
}

/**
 * After a transition's events: a job that ended gives back its slot (and has the next queued job
 * of its workflow started by a follow-up stored with it) and leaves the queue. Returns the change
 * to the counters the store must write with the job.
 */
export function settleSlot(d: Draft, before: SlotState | undefined): LimitChange | undefined {
  const job = d.job;
  if (releasesSlot(job)) {
    d.updateJob({ holdsSlot: undefined });
    if (before?.holdsSlot)
      d.effects.followUps.push({ kind: 'promoteQueued', jobId: job.id, workflow: job.workflow });
  }
  if (job.status !== 'queued' && job.queueSeq !== undefined) d.updateJob({ queueSeq: undefined });
  return limitChange(before, job, d.context.runningLimit?.max);
}
