import { type CompiledWorkflow, graphOf } from '../definition/compile.js';
import { stepInput } from './inputs.js';
import { correlationIdOf, type JobRecord, type StepRequest } from './types.js';

/**
 * The request of attempt `attempt` of `step`, built again from the job's state, when the job still
 * waits for a worker's reply to it: the job runs, the step runs that very attempt, and its deadline
 * (if it has a `timeout`) is still ahead. Undefined otherwise. A host whose broker lets requests
 * expire sends it again with this: the same attempt, so a duplicate is ignored like any other.
 */
export function awaitedRequest(
  workflow: CompiledWorkflow,
  job: JobRecord,
  step: string,
  attempt: number,
  now: number,
): StepRequest | undefined {
  if (job.status !== 'running') return undefined;
  const graph = graphOf(workflow, job.task);
  const node = graph.byName.get(step);
  const state = node && job.steps.get(node.index);
  if (state?.status !== 'running' || state.attempts !== attempt) return undefined;
  if (state.deadline !== undefined && state.deadline <= now) return undefined;
  if (node?.kind !== 'worker') return undefined;
  return {
    jobId: job.id,
    step,
    queue: node.queue,
    vhost: job.vhost,
    correlationId: correlationIdOf(job.id, step),
    attempt,
    body: state.input ?? stepInput(job, node, graph),
    ...(state.deadline !== undefined ? { deadline: state.deadline } : {}),
    ...(node.secrets ? { secrets: node.secrets } : {}),
  };
}
