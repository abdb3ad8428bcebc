import * as z from 'zod/mini';
import {
  DEFAULT_TIMEZONE,
  inNamespace,
  nextTicks,
  qualifiedName,
  type StoredWorkflow,
  scheduleKey,
  splitQualifiedName,
} from '../../../engine/index.js';
import { ApiError, json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { SchedulesDocument } from '../schemas/documents.js';
import { wholeNumber } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { workflowNameParameter } from '../schemas/shared-parameters.js';
import type { ScheduledJobEntry, WorkflowSchedulesDocument } from '../workflow-documents.js';

/** Scheduled jobs listed per workflow; `scheduledCount` says how many there are in all. */
const MAX_SCHEDULED_LISTED = 100;

async function schedulesOf(
  stored: StoredWorkflow,
  deps: ApiDeps,
  ticks: number,
): Promise<WorkflowSchedulesDocument> {
  const now = deps.service.now();
  const counts = await deps.service.countJobs(stored.name);
  const scheduled: ScheduledJobEntry[] = [];
  if (counts.scheduled > 0) {
    let cursor: string | undefined;
    // Newest first from the store; sorted by start time below. Bounded: a page or two.
    do {
      const page = await deps.service.queryJobs({
        workflow: stored.name,
        status: 'scheduled',
        limit: 100,
        cursor,
      });
      for (const job of page.jobs) {
        scheduled.push({
          id: job.id,
          startAt: new Date(job.startAt ?? job.createdAt).toISOString(),
          createdAt: new Date(job.createdAt).toISOString(),
        });
      }
      cursor = page.cursor;
    } while (cursor && scheduled.length < MAX_SCHEDULED_LISTED * 10);
    scheduled.sort((a, b) => a.startAt.localeCompare(b.startAt));
  }
  return {
    // The request's namespace is implied: the name is plain, as the workflow routes answer it.
    name: splitQualifiedName(stored.name).name,
    version: stored.version,
    enabled: stored.enabled,
    schedules: (stored.definition.schedules ?? []).map((schedule) => ({
      cron: schedule.cron,
      timezone: schedule.timezone ?? DEFAULT_TIMEZONE,
      catchUp: schedule.catchUp ?? 'all',
      input: schedule.input ?? {},
      key: scheduleKey(schedule),
      nextTicks: stored.enabled
        ? nextTicks(schedule, now, ticks).map((tick) => new Date(tick).toISOString())
        : [],
    })),
    scheduled: scheduled.slice(0, MAX_SCHEDULED_LISTED),
    scheduledCount: counts.scheduled,
  };
}

const ticksQuery = {
  ticks: {
    schema: wholeNumber({ min: 1, max: 50 }),
    description: 'Next ticks listed per schedule (default 5).',
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;
const DEFAULT_TICKS = 5;

const nameParams = { name: workflowNameParameter } as const satisfies ParameterSpecs;

async function workflowSchedules(
  request: CheckedRequest<typeof nameParams, typeof ticksQuery, NoParameters>,
  deps: ApiDeps,
) {
  const { name } = request.params;
  const stored = await deps.service.getWorkflow(qualifiedName(request.namespace, name));
  if (!stored) throw new ApiError('not_found', `no workflow named "${name}"`);
  return json(200, await schedulesOf(stored, deps, request.query.ticks ?? DEFAULT_TICKS));
}

/** Every workflow of the request's namespace with a schedule or a scheduled job. */
async function allSchedules(
  request: CheckedRequest<NoParameters, typeof ticksQuery, NoParameters>,
  deps: ApiDeps,
) {
  const ticks = request.query.ticks ?? DEFAULT_TICKS;
  const documents: WorkflowSchedulesDocument[] = [];
  for (const summary of await deps.service.listWorkflows()) {
    if (!inNamespace(summary.name, request.namespace)) continue;
    const stored = await deps.service.getWorkflow(summary.name);
    if (!stored) continue;
    const document = await schedulesOf(stored, deps, ticks);
    if (document.schedules.length > 0 || document.scheduledCount > 0) documents.push(document);
  }
  return json(200, documents);
}

export const scheduleRoutes = [
  route({
    method: 'GET',
    path: '/api/schedules',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'The schedules and scheduled jobs of every workflow that has any',
    query: ticksQuery,
    responses: { 200: { description: 'One entry per workflow.', schema: z.array(SchedulesDocument) } },
    handle: allSchedules,
  }),
  route({
    method: 'GET',
    path: '/api/workflow/{name}/schedules',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "A workflow's schedules with their next ticks, and its scheduled jobs",
    params: nameParams,
    query: ticksQuery,
    responses: {
      200: { description: 'The schedules.', schema: SchedulesDocument },
      404: refusal('No such workflow.'),
    },
    handle: workflowSchedules,
  }),
];
