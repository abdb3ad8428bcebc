import {
  type CompiledWorkflow,
  findStep,
  type JobRecord,
  splitQualifiedName,
  type TransitionNote,
  unhandled,
} from '../../engine/index.js';
import type { LogFields, Logger, StepLabels, Telemetry } from '../telemetry/telemetry.js';

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

/** Each compiled workflow's step labels, by task (null: the main graph) and step: notes are many. */
const labelsByWorkflow = new WeakMap<
  CompiledWorkflow,
  Map<string | null, Map<string, Readonly<StepLabels>>>
>();

/** `stepLabelsOf`, computed once per workflow version, task and step; the object is shared, not to be changed. */
function cachedStepLabels(job: JobRecord, step: string | undefined, workflow?: CompiledWorkflow): StepLabels {
  if (!workflow || step === undefined) return stepLabelsOf(job, step, workflow);
  let byTask = labelsByWorkflow.get(workflow);
  if (!byTask) {
    byTask = new Map();
    labelsByWorkflow.set(workflow, byTask);
  }
  let byStep = byTask.get(job.task);
  if (!byStep) {
    byStep = new Map();
    byTask.set(job.task, byStep);
  }
  let labels = byStep.get(step);
  if (!labels) {
    labels = Object.freeze(stepLabelsOf(job, step, workflow));
    byStep.set(step, labels);
  }
  return labels;
}

function queueOf(workflow: CompiledWorkflow, job: JobRecord, step: string): string {
  const graphs = [
    job.task === null ? workflow.main : workflow.tasks.get(job.task),
    ...workflow.tasks.values(),
  ];
  const node = graphs.map((graph) => graph?.byName.get(step)).find((found) => found !== undefined);
  return node?.kind === 'worker' ? node.queue : '';
}

/** A job's own course at INFO; a fan-out child's at DEBUG (see recordNotes). */
function lifecycle(logger: Logger, child: boolean, message: string, fields: LogFields): void {
  if (child) logger.debug(message, fields);
  else logger.info(message, fields);
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
    const labels = cachedStepLabels(job, note.step, workflow);
    const fields: LogFields = { jobId: note.jobId, step: note.step, attempt: note.attempt };
    // Notes of other jobs are of the children this transition created (and ended at once).
    const child = note.jobId !== job.id || job.parent !== null;
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
        fields.durationMs = note.durationMs;
        logger.debug('step completed', fields);
        if (fanOut) logger.info('fan-out completed', fields);
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
        lifecycle(logger, child, 'retry scheduled', { ...fields, detail: note.message });
        break;
      case 'stepFailed':
        logger.warn('step failed', { ...fields, error: note.message });
        break;
      case 'jobCompleted':
        metrics.count('jobs_finished_total', { status: 'completed' });
        lifecycle(logger, child, 'job completed', fields);
        break;
      case 'jobFailed':
        metrics.count('jobs_finished_total', { status: 'failed' });
        // A child's failure fails its fan-out step, which says so at WARN, naming the child.
        if (child) logger.debug('job failed', { ...fields, error: note.message });
        else logger.warn('job failed', { ...fields, error: note.message });
        break;
      case 'jobPaused':
        lifecycle(logger, child, 'job paused', fields);
        break;
      case 'jobResumed':
        lifecycle(logger, child, 'job resumed', fields);
        break;
      case 'jobQueued':
        logger.info('job queued: its workflow runs maxRunning jobs already', fields);
        break;
      case 'jobCancelled':
        metrics.count('jobs_finished_total', { status: 'cancelled' });
        lifecycle(logger, child, 'job cancelled', fields);
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
