import type { StepNode } from '../definition/compile.js';
import type { Draft } from './draft.js';
import { dispatchReady, sendAttempt } from './steps.js';
import { heldByRoot } from './tree-growth.js';
import { isFinished } from './types.js';

/*
 * Pause and resume of a job (docs/workflows.md, "Pause and resume").
 *
 * A paused job dispatches nothing new: `dispatchReady` and the dispatch of a completed step's
 * dependents run only for a running job, and `sendAttempt` holds a retry that would go at once
 * (`holdAttempt`). Everything else goes on as for a running job: replies, failures, heartbeats and
 * signals are stored (apply.ts accepts them for a paused job), a step's timeout still fails its
 * attempt, the job's deadline still fails the job, and a job whose last step completes completes.
 * A retry whose delay ends while paused is not sent: its step keeps `retryAt` (now past), and
 * `resumeJob` sends it. A large fan-out's next slice of children is not created while paused: the
 * step keeps `children.created`, and `resumeJob` asks for that slice again.
 *
 * Children: a running fan-out step's children are paused and resumed by follow-ups
 * (`pauseChildren`, `unpauseChildren`, carried out by functions/manager/follow-ups.ts), each child
 * by its own transition, which passes the pause on to its own fan-outs in turn.
 */

/** A running job pauses. */
export function pauseJob(d: Draft): void {
  if (isFinished(d.job.status)) return d.reject('conflict', `the job is already ${d.job.status}`);
  if (d.job.status === 'paused') return d.ignore('the job is already paused');
  // A child waiting for its turn has nothing to hold: its turn is what starts it, and no turn comes
  // while its parent is paused (the manager starts no child of a paused job).
  if (d.job.status === 'waiting') return d.ignore('the job has not started');
  // A queued job holds nothing either; cancelling it takes it out of its workflow's queue.
  if (d.job.status === 'queued')
    return d.reject(
      'conflict',
      'the job is queued: it has not started (cancel it to take it out of the queue)',
    );
  if (d.job.status === 'scheduled')
    return d.reject('conflict', 'the job is scheduled and has not started: cancel it instead');
  d.updateJob({ status: 'paused', pausedAt: d.now });
  for (const node of runningFanOuts(d)) {
    d.effects.followUps.push({ kind: 'pauseChildren', jobId: d.job.id, step: node.name });
  }
  for (const called of runningCalls(d)) d.effects.followUps.push({ kind: 'pauseJob', jobId: called });
  d.effects.notes.push({ kind: 'jobPaused', jobId: d.job.id });
}

/** A paused job runs again: the retries held and the steps that became ready are dispatched. */
export function resumeJob(d: Draft): void {
  if (isFinished(d.job.status)) return d.reject('conflict', `the job is already ${d.job.status}`);
  if (d.job.status !== 'paused') return d.ignore(`the job is ${d.job.status}, not paused`);
  // Its tree's root was paused again (tree-quota.ts): the root's own resume will come down to it.
  if (heldByRoot(d)) return d.ignore("the root of the job's tree is paused or has ended");
  d.updateJob({ status: 'running', pausedAt: undefined });
  d.effects.notes.push({ kind: 'jobResumed', jobId: d.job.id });
  for (const node of runningFanOuts(d)) {
    d.effects.followUps.push({ kind: 'unpauseChildren', jobId: d.job.id, step: node.name });
    const created = d.step(node.name).children?.created;
    if (created !== undefined)
      d.effects.followUps.push({ kind: 'createChildren', jobId: d.job.id, step: node.name, from: created });
  }
  for (const called of runningCalls(d)) d.effects.followUps.push({ kind: 'resumeJob', jobId: called });
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    // A retry whose delay ended while paused (a later one keeps its timer, which sends it then).
    const retried = node.kind === 'worker' || node.kind === 'call';
    if (retried && state.status === 'running' && state.retryAt !== undefined) {
      if (state.retryAt <= d.now) sendAttempt(d, node);
    }
  }
  dispatchReady(
    d,
    d.graph.steps.map((step) => step.name),
  );
}

/** The jobs that running `workflow:` steps wait for (not those whose attempt failed and waits to retry). */
function runningCalls(d: Draft): string[] {
  const jobs: string[] = [];
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    if (node.kind === 'call' && state.status === 'running' && state.retryAt === undefined && state.job)
      jobs.push(state.job);
  }
  return jobs;
}

function runningFanOuts(d: Draft): StepNode[] {
  return d.graph.steps.filter(
    (node) => node.kind === 'fanout' && d.step(node.name).status === 'running' && d.step(node.name).children,
  );
}
