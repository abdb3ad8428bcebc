import type { JobEvent, TreeState } from '../../engine/index.js';

/** One event for one job, as the manager applies it. */
export interface JobEventInput {
  jobId: string;
  event: JobEvent;
  /**
   * The job's tree as the sender read it (a caller whose called job could not start): the engine
   * decides on it as on a tree read after a refused commit (engine/job/tree-quota.ts).
   */
  tree?: TreeState;
  /**
   * A caller waits for the answer (an API command): a request the event would build over the size
   * limit refuses the event (`too_large`, 413) instead of failing the step that built it.
   */
  refuseOversized?: boolean;
}
