import type { JobEvent } from '../../engine/index.js';

/** One event for one job, as the manager applies it. */
export interface JobEventInput {
  jobId: string;
  event: JobEvent;
}
