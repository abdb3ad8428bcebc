/** The shapes of api.md the dashboard reads: the server's own types where it exports them. */

import {
  type Json,
  type JsonObject,
  LISTED_STATUSES,
  type ListedStatus,
  type StepDefinition,
  type StepStatus,
  type TaskDefinition,
  type WorkflowDefinition,
} from '../../../engine/index.js';
import type { JobDocument, JobSummary, StepView, WaitView } from '../../api/job-document.js';
import type {
  WorkflowDefinitionDocument,
  WorkflowListing,
  WorkflowSchedulesDocument,
} from '../../api/workflow-documents.js';

/** A job's status as the API shows it: the listed status (`waiting` for someone, `pending` not started). */
export type JobStatus = ListedStatus;

export type {
  JobDocument,
  JobSummary,
  Json,
  JsonObject,
  StepDefinition,
  StepStatus,
  StepView,
  TaskDefinition,
  WaitView,
  WorkflowDefinition,
  WorkflowDefinitionDocument,
  WorkflowListing,
  WorkflowSchedulesDocument,
};

/** `GET /api/jobs?detail=1`. */
export interface JobListPage {
  jobs: JobSummary[];
  cursor?: string;
}

/** `GET /api/job/{id}/children`. */
export interface ChildrenPage {
  children: { uuid: string; index: number; status: JobStatus }[];
  cursor?: string;
}

/** The statuses the jobs list filters on: every listed status (engine/job/listed-status.ts), or all. */
export type JobFilter = 'all' | ListedStatus;
export const JOB_FILTERS: readonly JobFilter[] = ['all', ...LISTED_STATUSES];
