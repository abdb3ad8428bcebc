import type { JobStatus, JsonObject, WorkflowDefinition } from '../../engine/index.js';

/** A version of a workflow and when it was registered. */
export interface VersionEntry {
  version: number;
  createdAt: string;
}

/** One entry of `GET /api/workflows`: a workflow on one of its vhosts. */
export interface WorkflowListing {
  name: string;
  vhost: string;
  /** Running (and paused) top-level jobs, as the original counted them. */
  job_count: number;
  version: number;
  enabled: boolean;
  description: string;
  jobs: Record<JobStatus, number>;
  versions: VersionEntry[];
}

/** `GET /api/workflow/{name}/definition[?version=N]`. */
export interface WorkflowDefinitionDocument {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  definition: WorkflowDefinition;
  versions: VersionEntry[];
}

/** One schedule of a workflow's latest version, with its next ticks. */
export interface ScheduleEntry {
  cron: string;
  timezone: string;
  catchUp: 'all' | 'latest';
  input: JsonObject;
  /** Names the schedule within its workflow (its cron, time zone and input): part of each tick's job id. */
  key: string;
  /** The next ticks (RFC 3339, UTC); none when the workflow is disabled. */
  nextTicks: string[];
}

/** A job waiting for its delayed start (`?at=`). */
export interface ScheduledJobEntry {
  id: string;
  startAt: string;
  createdAt: string;
}

/** `GET /api/workflow/{name}/schedules`, and each entry of `GET /api/schedules`. */
export interface WorkflowSchedulesDocument {
  name: string;
  version: number;
  enabled: boolean;
  schedules: ScheduleEntry[];
  /** Its top-level jobs waiting for their start time, soonest first (at most 100). */
  scheduled: ScheduledJobEntry[];
  /** How many jobs are scheduled in all. */
  scheduledCount: number;
}
