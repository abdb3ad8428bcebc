import type { JobStatus, WorkflowDefinition } from '../../engine/index.js';

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
