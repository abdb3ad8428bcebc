import { type TransitionNote, unhandled } from '../../engine/index.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** Logs and counts what a stored transition did. */
export function recordNotes({ logger, metrics }: Telemetry, notes: readonly TransitionNote[]): void {
  for (const note of notes) {
    const fields = { jobId: note.jobId, step: note.step, attempt: note.attempt };
    switch (note.kind) {
      case 'dispatched':
        metrics.count('steps_dispatched_total');
        logger.debug('step dispatched', fields);
        break;
      case 'stepCompleted':
        metrics.count('steps_completed_total');
        if (note.durationMs !== undefined) metrics.observe('step_duration_seconds', note.durationMs / 1000);
        logger.debug('step completed', { ...fields, durationMs: note.durationMs });
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
        logger.info('retry scheduled', { ...fields, detail: note.message });
        break;
      case 'stepFailed':
        logger.warn('step failed', { ...fields, error: note.message });
        break;
      case 'jobCompleted':
        metrics.count('jobs_finished_total', { status: 'completed' });
        logger.info('job completed', fields);
        break;
      case 'jobFailed':
        metrics.count('jobs_finished_total', { status: 'failed' });
        logger.warn('job failed', { ...fields, error: note.message });
        break;
      case 'jobPaused':
        logger.info('job paused', fields);
        break;
      case 'jobResumed':
        logger.info('job resumed', fields);
        break;
      case 'jobQueued':
        logger.info('job queued: its workflow runs maxRunning jobs already', fields);
        break;
      case 'jobCancelled':
        metrics.count('jobs_finished_total', { status: 'cancelled' });
        logger.info('job cancelled', fields);
        break;
      case 'jobAborted':
        metrics.count('jobs_finished_total', { status: 'aborted' });
        logger.warn('job aborted', { ...fields, error: note.message });
        break;
      case 'stepSkipped':
        metrics.count('steps_skipped_total');
        logger.debug('step skipped', { ...fields, detail: note.message });
        break;
      case 'stepSuspended':
        logger.info('step suspended: waits for a signal', fields);
        break;
      default:
        unhandled(note.kind, 'transition note');
    }
  }
}
