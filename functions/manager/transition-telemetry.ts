import {
  type CompiledWorkflow,
  findStep,
  type JobRecord,
  splitQualifiedName,
  type TransitionNote,
  unhandled,
} from '../../engine/index.js';
import type { LogFields, StepLabels, Telemetry } from '../telemetry/telemetry.js';

/**
 * The labels of a note's step: the job's namespace and workflow, the step, and its queue when the
 * compiled workflow is at hand (a fan-out child's note names a step of its task). A step not found
 * has no queue label value (empty).
 */
export function stepLabelsOf(
  job: JobRecord,
  step: string | undefined,
  workflow?: CompiledWorkflow,
): StepLabels {
  const { namespace, name } = splitQualifiedName(job.workflow);
  return {
    namespace,
    workflow: name,
    step: step ?? '',
    queue: step && workflow ? queueOf(workflow, job, step) : '',
  };
}

function queueOf(workflow: CompiledWorkflow, job: JobRecord, step: string): string {
  const graphs = [
    job.task === null ? workflow.main : workflow.tasks.get(job.task),
    ...workflow.tasks.values(),
  ];
  const node = graphs.map((graph) => graph?.byName.get(step)).find((found) => found !== undefined);
  return node?.kind === 'worker' ? node.queue : '';
}

/**
 * Logs and counts what a stored transition of `job` did. A fan-out child's own course (completed,
 * cancelled, paused, resumed, retried) is logged at DEBUG: a fan-out of 2,000 children would write
 * 2,000 lines at INFO. The fan-out step says at INFO, once, how it ended (`fan-out completed`, with
 * its children's count), and its failure at WARN, as every step's. Attempt failures stay WARN.
 */
export function recordNotes(
  { logger, metrics }: Telemetry,
  notes: readonly TransitionNote[],
  job: JobRecord,
  workflow?: CompiledWorkflow,
): void {
  for (const note of notes) {
    const labels = stepLabelsOf(job, note.step, workflow);
    const fields: LogFields = { jobId: note.jobId, step: note.step, attempt: note.attempt };
    // Notes of other jobs are of the children this transition created (and ended at once).
    const child = note.jobId !== job.id || job.parent !== null;
    const lifecycle = (message: string, fields: LogFields) =>
      child ? logger.debug(message, fields) : logger.info(message, fields);
    // Only a step's end is looked up (a linear search): a transition may dispatch thousands of steps.
    const ended = note.kind === 'stepCompleted' || note.kind === 'stepFailed';
    const fanOut =
      ended && note.jobId === job.id && note.step !== undefined
        ? findStep(job, note.step)?.children
        : undefined;
    if (fanOut) fields.children = fanOut.total;
    switch (note.kind) {
      case 'dispatched':
        metrics.count('steps_dispatched_total', labels);
        logger.debug('step dispatched', fields);
        break;
      case 'stepCompleted':
        metrics.count('steps_completed_total', labels);
        if (note.durationMs !== undefined)
          metrics.observe('step_duration_seconds', note.durationMs / 1000, labels);
        logger.debug('step completed', { ...fields, durationMs: note.durationMs });
        if (fanOut) logger.info('fan-out completed', { ...fields, durationMs: note.durationMs });
        break;
      case 'attemptFailed':
        metrics.count('step_attempts_failed_total', labels);
        logger.warn('attempt failed', { ...fields, error: note.message });
        break;
      case 'timedOut':
        metrics.count('timeouts_total', labels);
        metrics.count('step_attempts_failed_total', labels);
        logger.warn('attempt timed out', { ...fields, error: note.message });
        break;
      case 'retryScheduled':
        metrics.count('retries_total', labels);
        lifecycle('retry scheduled', { ...fields, detail: note.message });
        break;
      case 'stepFailed':
        logger.warn('step failed', { ...fields, error: note.message });
        break;
      case 'jobCompleted':
        metrics.count('jobs_finished_total', { status: 'completed' });
        lifecycle('job completed', fields);
        break;
      case 'jobFailed':
        metrics.count('jobs_finished_total', { status: 'failed' });
        // A child's failure fails its fan-out step, which says so at WARN, naming the child.
        if (child) logger.debug('job failed', { ...fields, error: note.message });
        else logger.warn('job failed', { ...fields, error: note.message });
        break;
      case 'jobPaused':
        lifecycle('job paused', fields);
        break;
      case 'jobResumed':
        lifecycle('job resumed', fields);
        break;
      case 'jobQueued':
        logger.info('job queued: its workflow runs maxRunning jobs already', fields);
        break;
      case 'jobCancelled':
        metrics.count('jobs_finished_total', { status: 'cancelled' });
        lifecycle('job cancelled', fields);
        break;
      case 'jobAborted':
        metrics.count('jobs_finished_total', { status: 'aborted' });
        // A child's abort aborts its top-level job, which says so.
        if (child) logger.debug('job aborted', { ...fields, error: note.message });
        else logger.warn('job aborted', { ...fields, error: note.message });
        break;
      case 'stepSkipped':
        metrics.count('steps_skipped_total', labels);
        logger.debug('step skipped', { ...fields, detail: note.message });
        break;
      case 'stepSuspended':
        logger.info('step suspended: waits for a signal', fields);
        break;
      case 'signalBuffered':
        logger.info('signal kept until its step waits for it', { ...fields, detail: note.message });
        break;
      case 'signalDelivered':
        logger.info('kept signal handed to its step', fields);
        break;
      case 'signalDropped':
        logger.warn('kept signal dropped', { ...fields, detail: note.message });
        break;
      case 'awaitingSignal':
        logger.debug('signal step waits for its signal', fields);
        break;
      default:
        unhandled(note.kind, 'transition note');
    }
  }
}
