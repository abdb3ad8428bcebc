import {
  inNamespace,
  isFinished,
  isUuid,
  JOB_STATUSES,
  type JobRecord,
  type JobStatus,
  qualifiedName,
} from '../../../engine/index.js';
import { ApiError, type ApiRequest, type ApiResponse, ifNoneMatchFails, json, notModified } from '../http.js';
import { flagParam, intParam, readJsonObject } from '../read-body.js';
import type { ApiDeps, Route } from '../router.js';

const STATUSES: readonly JobStatus[] = JOB_STATUSES;
const MAX_WAIT_SECONDS = 25;

function jobId(request: ApiRequest): string {
  const id = request.params.id as string;
  if (!isUuid(id)) throw new ApiError('bad_request', `"${id}" is not a job id (a UUID)`);
  return id.toLowerCase();
}

/** The job, when it belongs to the request's namespace: another namespace's job is as if absent. */
async function requireJob(deps: ApiDeps, request: ApiRequest, id: string): Promise<JobRecord> {
  const job = await deps.service.getJob(id);
  if (!job || !inNamespace(job.workflow, request.namespace)) throw new ApiError('not_found', `no job ${id}`);
  return job;
}

/** Top-level running jobs by default, as the original; filters, pages, and summaries with `detail=1`. */
async function listJobs(request: ApiRequest, deps: ApiDeps) {
  const status = request.query.status || 'running';
  if (status !== 'all' && !STATUSES.includes(status as JobStatus)) {
    throw new ApiError(
      'bad_request',
      `"status" must be one of ${STATUSES.join(', ')} or all, got "${status}"`,
    );
  }
  const page = await deps.service.queryJobs({
    namespace: request.namespace,
    workflow: request.query.workflow ? qualifiedName(request.namespace, request.query.workflow) : undefined,
    status: status === 'all' ? undefined : (status as JobStatus),
    includeChildren: flagParam(request, 'children'),
    limit: intParam(request, 'limit', { min: 1, max: 1000 }) ?? 100,
    cursor: request.query.cursor || undefined,
  });
  const jobs = flagParam(request, 'detail')
    ? await Promise.all(page.jobs.map((job) => deps.service.jobSummary(job)))
    : page.jobs.map((job) => job.id);
  return json(200, page.cursor ? { jobs, cursor: page.cursor } : { jobs });
}

/**
 * The job document, tagged with the job's version (`ETag`). With `If-None-Match` naming the version
 * the caller holds, it answers 304 Not Modified while the job is still at that version. With
 * `?wait=S`, it answers when the job moves on from the version the caller holds (or, without
 * `If-None-Match`, from the version it has now), or after S seconds: a change that lands between one
 * answer and the caller's next request is then answered at once rather than missed. A job that has
 * ended answers at once: it will not change again.
 */
async function getJob(request: ApiRequest, deps: ApiDeps): Promise<ApiResponse> {
  const id = jobId(request);
  let job = await requireJob(deps, request, id);
  let version = await deps.service.jobVersion(job);
  const held = request.headers['if-none-match'];
  const initial = version;
  const unchanged = (current: string) =>
    held === undefined ? current === initial : ifNoneMatchFails(held, current);
  const wait = intParam(request, 'wait', { min: 0, max: 3600 });
  if (wait && !isFinished(job.status) && unchanged(version)) {
    const deadline = Date.now() + Math.min(wait, MAX_WAIT_SECONDS) * 1000;
    while (Date.now() < deadline && !deps.shutdown?.aborted) {
      await new Promise((resolve) => setTimeout(resolve, deps.waitPollMs ?? 250));
      if (deps.shutdown?.aborted) break;
      job = await requireJob(deps, request, id);
      version = await deps.service.jobVersion(job);
      if (!unchanged(version)) break;
    }
  }
  if (held !== undefined && unchanged(version)) return notModified(version);
  return json(200, await deps.service.jobDocument(job), { etag: version });
}

async function children(request: ApiRequest, deps: ApiDeps) {
  const id = jobId(request);
  const job = await requireJob(deps, request, id);
  const step = request.query.step;
  if (!step) throw new ApiError('bad_request', 'query parameter "step" (a fan-out step) is required');
  const state = job.steps.find((candidate) => candidate.name === step);
  if (!state) throw new ApiError('bad_request', `job ${id} has no step "${step}"`);
  const fromIndex = request.query.cursor ? Number(request.query.cursor) : 0;
  if (!Number.isInteger(fromIndex) || fromIndex < 0)
    throw new ApiError('bad_request', `invalid cursor "${request.query.cursor}"`);
  const limit = intParam(request, 'limit', { min: 1, max: 1000 }) ?? 1000;
  const page = await deps.service.listChildren(id, step, { fromIndex, limit });
  const body: { children: { uuid: string; index: number; status: JobStatus }[]; cursor?: string } = {
    children: page.children.map((child) => ({
      uuid: child.id,
      index: child.parent?.index ?? -1,
      status: child.status,
    })),
  };
  if (page.nextIndex !== undefined) body.cursor = String(page.nextIndex);
  return json(200, body);
}

/** The request's job id, once its job is known to be in the request's namespace. */
async function commandedJob(request: ApiRequest, deps: ApiDeps): Promise<string> {
  const id = jobId(request);
  await requireJob(deps, request, id);
  return id;
}

async function cancel(request: ApiRequest, deps: ApiDeps) {
  const job = await deps.service.cancel(await commandedJob(request, deps));
  return json(200, await deps.service.jobDocument(job));
}

async function signal(request: ApiRequest, deps: ApiDeps) {
  const id = await commandedJob(request, deps);
  const output = readJsonObject(request, 'the signal body');
  const job = await deps.service.signal(id, request.params.step as string, output);
  return json(200, await deps.service.jobDocument(job));
}

/** A child id pauses (or resumes) its top-level job, as cancel and retry do. */
async function pause(request: ApiRequest, deps: ApiDeps) {
  const job = await deps.service.pause(await commandedJob(request, deps));
  return json(200, await deps.service.jobDocument(job));
}

async function resume(request: ApiRequest, deps: ApiDeps) {
  const job = await deps.service.resume(await commandedJob(request, deps));
  return json(200, await deps.service.jobDocument(job));
}

async function retry(request: ApiRequest, deps: ApiDeps) {
  const job = await deps.service.retry(await commandedJob(request, deps));
  return json(200, await deps.service.jobDocument(job));
}

const namespaced = { auth: true, namespaced: true } as const;

export const jobRoutes: Route[] = [
  { method: 'GET', path: '/api/jobs', ...namespaced, handle: listJobs },
  { method: 'GET', path: '/api/job/{id}', ...namespaced, handle: getJob },
  { method: 'GET', path: '/api/job/{id}/children', ...namespaced, handle: children },
  { method: 'DELETE', path: '/api/job/{id}', ...namespaced, role: 'run', handle: cancel },
  { method: 'POST', path: '/api/job/{id}/signal/{step}', ...namespaced, role: 'run', handle: signal },
  { method: 'POST', path: '/api/job/{id}/retry', ...namespaced, role: 'run', handle: retry },
  { method: 'POST', path: '/api/job/{id}/pause', ...namespaced, role: 'run', handle: pause },
  { method: 'POST', path: '/api/job/{id}/resume', ...namespaced, role: 'run', handle: resume },
];
