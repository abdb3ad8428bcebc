import { resolveInCallerNamespace } from '../definition/namespace.js';
import type { JsonObject } from '../json.js';
import type { Draft } from './draft.js';
import type { JobError } from './types.js';
import { uuidV5 } from './uuid-v5.js';

/**
 * The id of the `onFailure` job of a job's `failures`-th failure: derived, so that a transition run
 * again, or a follow-up carried out twice, starts that one job and no other.
 */
export function onFailureJobId(jobId: string, failures: number): string {
  return uuidV5(`${jobId}/onFailure/${failures}`);
}

/**
 * A top-level job failed, timed out or was aborted: when its workflow names an `onFailure`
 * workflow, a job of it is started (by a follow-up stored with this transition) with the failed
 * job and its error as input, and the two are linked both ways.
 */
export function startOnFailure(d: Draft, error: JobError): void {
  if (!d.workflow.onFailure || d.job.parent !== null) return;
  // A plain name: the workflow of that name in the failed job's namespace.
  const workflow = resolveInCallerNamespace(d.workflow.name, d.workflow.onFailure);
  const failures = (d.job.failures ?? 0) + 1;
  const id = onFailureJobId(d.job.id, failures);
  d.updateJob({ failures, followUp: id });
  const { id: jobId, version, input } = d.job;
  const failed: JsonObject = { id: jobId, workflow: d.workflow.name, version, input };
  const cause: JsonObject = {
    step: error.step,
    attempt: error.attempt,
    message: error.message,
    at: error.at,
  };
  d.effects.followUps.push({
    kind: 'startJob',
    jobId,
    workflow,
    id,
    input: { job: failed, error: cause },
    causedBy: jobId,
  });
}
