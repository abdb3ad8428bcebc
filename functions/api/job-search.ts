import * as z from 'zod/mini';
import { type JobQuery, type ListedStatus, qualifiedName } from '../../engine/index.js';
import type { ParameterSpecs } from './router.js';
import {
  AttributeFilter,
  attributeFilterOf,
  Flag,
  flagSet,
  JobStatusFilter,
  QueryTime,
  queryTimeMs,
  WorkflowName,
} from './schemas/parameters.js';

/** The most characters of error text a search looks for. */
const MAX_ERROR_TEXT = 200;

export const ErrorText = z
  .string()
  .check(
    z.maxLength(MAX_ERROR_TEXT),
    z.meta({ description: `text of at most ${MAX_ERROR_TEXT} characters` }),
  );

/**
 * The filters of a job search, shared by `GET /api/jobs` and the batch commands
 * (`POST /api/jobs/cancel`, `/api/jobs/retry`): the same query finds the same jobs.
 */
export const jobFilterQuery = {
  workflow: { schema: WorkflowName, description: 'Only this workflow.', emptyIsAbsent: true },
  status: {
    schema: JobStatusFilter,
    description:
      'Only this status (`waiting`: a step waits for someone, a signal or a suspended step; `pending`: not started), or `all`.',
    emptyIsAbsent: true,
  },
  children: { schema: Flag, description: 'Yes: include fan-out children.', emptyIsAbsent: true },
  createdAfter: { schema: QueryTime, description: 'Created at or after this time.', emptyIsAbsent: true },
  createdBefore: { schema: QueryTime, description: 'Created before this time.', emptyIsAbsent: true },
  endedAfter: { schema: QueryTime, description: 'Ended at or after this time.', emptyIsAbsent: true },
  endedBefore: { schema: QueryTime, description: 'Ended before this time.', emptyIsAbsent: true },
  error: {
    schema: ErrorText,
    description: "Only jobs whose error (its message or its step's name) holds this text, in any case.",
    emptyIsAbsent: true,
  },
  attr: {
    schema: AttributeFilter,
    description:
      "Search attributes (a workflow's `searchAttributes:`): `NAME=VALUE`, several separated by commas; a job matches when it has every one.",
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;

export interface JobFilterParameters {
  workflow?: string;
  status?: string;
  children?: Parameters<typeof flagSet>[0];
  createdAfter?: string;
  createdBefore?: string;
  endedAfter?: string;
  endedBefore?: string;
  error?: string;
  attr?: string;
}

/** A search's query for the store, in the request's namespace. `status` defaults to `fallback`. */
export function jobQueryOf(
  given: JobFilterParameters,
  namespace: string,
  fallback: ListedStatus | 'all',
): JobQuery {
  const status = given.status ?? fallback;
  const time = (text: string | undefined) => (text === undefined ? undefined : queryTimeMs(text));
  const query: JobQuery = {
    namespace,
    workflow: given.workflow === undefined ? undefined : qualifiedName(namespace, given.workflow),
    status: status === 'all' ? undefined : (status as ListedStatus),
    includeChildren: flagSet(given.children),
    createdAfter: time(given.createdAfter),
    createdBefore: time(given.createdBefore),
    endedSince: time(given.endedAfter),
    endedBefore: time(given.endedBefore),
    errorContains: given.error,
    attributes: given.attr === undefined ? undefined : attributeFilterOf(given.attr),
  };
  for (const key of Object.keys(query) as (keyof JobQuery)[]) if (query[key] === undefined) delete query[key];
  return query;
}
