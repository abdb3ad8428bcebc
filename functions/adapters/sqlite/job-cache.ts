import { isFinished, type JobRecord, type JobRecordText } from '../../../engine/index.js';

/** Running jobs kept by default: more than the jobs a busy serve has in flight between two replies. */
export const DEFAULT_JOB_CACHE_SIZE = 20_000;

/**
 * The SQLite store's write-through cache of unfinished jobs, exactly as last committed. serve is the
 * only writer of its file (it holds it locked), so a record cached at commit stays what the database
 * holds until the store itself writes or deletes that job: a read of a job in flight skips the
 * SELECT and the JSON.parse. Finished jobs are left out: they rarely take another event. A fan-out's
 * children are cached as they are created when they start at once (their replies come soon), not
 * when they wait their turn behind the step's concurrency.
 *
 * Records are shared, not copied: callers treat them as immutable (the engine copies before it
 * changes anything). Eviction is by age of the last write, oldest first. A long job's record is
 * kept with the text of its parts as written (`jobRecordText`), from which its next revision's text
 * is built.
 */
export class JobCache {
  private readonly jobs = new Map<string, { job: JobRecord; text?: JobRecordText }>();

  constructor(private readonly capacity = DEFAULT_JOB_CACHE_SIZE) {}

  get(id: string): JobRecord | undefined {
    return this.jobs.get(id)?.job;
  }

  /** The cached revision, with the text it was written with when that was kept. */
  entry(id: string): { job: JobRecord; text?: JobRecordText } | undefined {
    return this.jobs.get(id);
  }

  /** After the transaction that wrote `job` (as `text`, when given) committed. */
  written(job: JobRecord, text?: JobRecordText): void {
    this.jobs.delete(job.id);
    if (this.capacity <= 0 || isFinished(job.status)) return;
    // A short record's text is written whole next time: nothing of it is worth keeping.
    this.jobs.set(job.id, text?.job === job && text.fields ? { job, text } : { job });
    if (this.jobs.size > this.capacity) {
      const oldest = this.jobs.keys().next();
      if (!oldest.done) this.jobs.delete(oldest.value);
    }
  }

  forget(id: string): void {
    this.jobs.delete(id);
  }
}
