import { findStep, type JobRecord, type TransitionNote, unhandled } from '../../engine/index.js';
import type { LogFields, Telemetry } from '../telemetry/telemetry.js';

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
): void {
  for (const note of notes) {
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
        metrics.count('steps_dispatched_total');
        logger.debug('step dispatched', fields);
        break;
      case 'stepCompleted':
        metrics.count('steps_completed_total');
        if (note.durationMs !== undefined) metrics.observe('step_duration_seconds', note.durationMs / 1000);
        logger.debug('step completed', { ...fields, durationMs: note.durationMs });
        if (fanOut) logger.info('fan-out completed', { ...fields, durationMs: note.durationMs });
        break;
      case 'attemptFailed':
        metrics.count('step_attempts_failed_total');
        logger.warn('attempt failed', { ...fields, error: note.message });
        break;
      case 'timedOut':
        metrics.count('timeouts_total');
        metrics.count('step_attempts_failed_total');
        logger.warn('attempt timed out', { ...fields, error: note.message });
        break;
      case 'retryScheduled':
        metrics.count('retries_total');
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
        metrics.count('steps_skipped_total');
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
