import { createHash } from 'node:crypto';
import {
  actorOf,
  historyPage,
  inNamespace,
  isFinished,
  type JobRecord,
  type JsonObject,
  type ListedStatus,
  listedStatusOf,
} from '../../../engine/index.js';
import { ApiError, type ApiResponse, ifNoneMatchFails, json, notModified } from '../http.js';
import { jobFilterQuery, jobQueryOf } from '../job-search.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import {
  ChildrenPageDocument,
  JobDocument,
  JobEventsDocument,
  JobPageDocument,
  SignalKeptDocument,
} from '../schemas/documents.js';
import {
  AnyJsonObject,
  ChildCursor,
  EntityTags,
  Flag,
  flagSet,
  JobIdList,
  PageCursor,
  StepName,
  StepPath,
  wholeNumber,
} from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { jobIdParameter, pageCursorParameter, pageLimitParameter } from '../schemas/shared-parameters.js';

const MAX_WAIT_SECONDS = 25;
/** The most jobs `GET /api/jobs?ids=` reads at once. */
const MAX_IDS = 100;

type JobRequest<
  Q extends ParameterSpecs = NoParameters,
  P extends ParameterSpecs = { id: ReturnType<typeof jobIdParameter> },
> = CheckedRequest<P, Q, NoParameters>;

/** The job, when it belongs to the request's namespace: another namespace's job is as if absent. */
export async function requireJob(deps: ApiDeps, namespace: string, id: string): Promise<JobRecord> {
  const job = await deps.service.getJob(id);
  if (!job || !inNamespace(job.workflow, namespace)) throw new ApiError('not_found', `no job ${id}`);
  return job;
}

const listQuery = {
  ...jobFilterQuery,
  status: { ...jobFilterQuery.status, description: `${jobFilterQuery.status.description} Default: running.` },
  detail: { schema: Flag, description: 'Yes: summaries instead of ids.', emptyIsAbsent: true },
  limit: pageLimitParameter(1000, 100),
  cursor: pageCursorParameter(PageCursor),
  ids: {
    schema: JobIdList,
    description: `These jobs only (at most ${MAX_IDS}, comma-separated), as summaries, in this order, tagged with one \`ETag\` for all of them: with \`If-None-Match\`, 304 while none of them changed. Jobs of other namespaces and unknown ids are left out. The other filters do not apply.`,
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;

/**
 * Top-level running jobs by default, as the original; searched on the server by status (`waiting`
 * among them), time ranges, error text and search attributes, in pages; summaries with `detail=1`.
 */
async function listJobs(
  request: CheckedRequest<NoParameters, typeof listQuery, NoParameters>,
  deps: ApiDeps,
) {
  const { detail, limit = 100, cursor, ids } = request.query;
  if (ids !== undefined) return jobsByIds(request, deps, ids);
  const page = await deps.service.queryJobs({
    ...jobQueryOf(request.query, request.namespace, 'running'),
    limit,
    cursor,
  });
  const jobs = flagSet(detail)
    ? await Promise.all(page.jobs.map((job) => deps.service.jobSummary(job)))
    : page.jobs.map((job) => job.id);
  return json(200, page.cursor ? { jobs, cursor: page.cursor } : { jobs });
}

/**
 * The summaries of the jobs named (a dashboard page's, `switchyard watch`'s), with one tag made of
 * their versions: a caller polling them with `If-None-Match` pays one request, answered 304 while
 * nothing changed, whatever the number of jobs.
 */
async function jobsByIds(
  request: CheckedRequest<NoParameters, typeof listQuery, NoParameters>,
  deps: ApiDeps,
  list: string,
): Promise<ApiResponse> {
  const ids = [...new Set(list.split(',').map((id) => id.trim().toLowerCase()))];
  if (ids.length > MAX_IDS)
    throw new ApiError('bad_request', `ids: at most ${MAX_IDS} jobs, got ${ids.length}`);
  const found = await Promise.all(ids.map((id) => deps.service.getJob(id)));
  const jobs = found.filter(
    (job): job is JobRecord => job !== undefined && inNamespace(job.workflow, request.namespace),
  );
  const versions = await Promise.all(jobs.map((job) => deps.service.jobVersion(job)));
  const etag = `W/"${createHash('sha256')
    .update(jobs.map((job, n) => `${job.id}${versions[n]}`).join(','))
    .digest('base64url')
    .slice(0, 22)}"`;
  const held = request.headers['if-none-match'];
  if (held !== undefined && ifNoneMatchFails(held, etag)) return notModified(etag);
  const summaries = await Promise.all(jobs.map((job) => deps.service.jobSummary(job)));
  return json(200, { jobs: summaries }, { etag });
}

const getQuery = {
  wait: {
    schema: wholeNumber({ min: 0, max: 3600 }),
    description: `Answer when the job moves on from the version named in \`If-None-Match\` (without it, from the version it has now), or after this many seconds (at most ${MAX_WAIT_SECONDS} are waited; deployed on Lambda, none: it answers at once, and callers poll with \`If-None-Match\`); a job that has ended answers at once.`,
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;

/**
 * The job document, tagged with the job's version (`ETag`). With `If-None-Match` naming the version
 * the caller holds, it answers 304 Not Modified while the job is still at that version. With
 * `?wait=S`, it answers when the job moves on from the version the caller holds (or, without
 * `If-None-Match`, from the version it has now), or after S seconds: a change that lands between one
 * answer and the caller's next request is then answered at once rather than missed. A job that has
 * ended answers at once: it will not change again.
 */
async function getJob(request: JobRequest<typeof getQuery>, deps: ApiDeps): Promise<ApiResponse> {
  const id = request.params.id.toLowerCase();
  let job = await requireJob(deps, request.namespace, id);
  let version = await deps.service.jobVersion(job);
  const held = request.headers['if-none-match'];
  const initial = version;
  const unchanged = (current: string) =>
    held === undefined ? current === initial : ifNoneMatchFails(held, current);
  const { wait } = request.query;
  if (wait && !isFinished(job.status) && unchanged(version)) {
    const deadline = Date.now() + Math.min(wait, deps.maxWaitSeconds ?? MAX_WAIT_SECONDS) * 1000;
    while (Date.now() < deadline && !deps.shutdown?.aborted) {
      await new Promise((resolve) => setTimeout(resolve, deps.waitPollMs ?? 250));
      if (deps.shutdown?.aborted) break;
      job = await requireJob(deps, request.namespace, id);
      version = await deps.service.jobVersion(job);
      if (!unchanged(version)) break;
    }
  }
  if (held !== undefined && unchanged(version)) return notModified(version);
  return json(200, await deps.service.jobDocument(job), { etag: version });
}

const childrenQuery = {
  step: { schema: StepName, description: 'The fan-out step.', required: true },
  cursor: pageCursorParameter(ChildCursor),
  limit: pageLimitParameter(1000, 1000),
} as const satisfies ParameterSpecs;

async function children(request: JobRequest<typeof childrenQuery>, deps: ApiDeps) {
  const id = request.params.id.toLowerCase();
  const job = await requireJob(deps, request.namespace, id);
  const { step, cursor, limit = 1000 } = request.query;
  if (!job.steps.find((candidate) => candidate.name === step))
    throw new ApiError('bad_request', `job ${id} has no step "${step}"`);
  const page = await deps.service.listChildren(id, step, { fromIndex: cursor ? Number(cursor) : 0, limit });
  const body: { children: { uuid: string; index: number; status: ListedStatus }[]; cursor?: string } = {
    children: page.children.map((child) => ({
      uuid: child.id,
      index: child.parent?.index ?? -1,
      status: listedStatusOf(child),
    })),
  };
  if (page.nextIndex !== undefined) body.cursor = String(page.nextIndex);
  return json(200, body);
}

/** The request's job id, once its job is known to be in the request's namespace. */
async function commandedJob(
  request: JobRequest<ParameterSpecs, ParameterSpecs>,
  deps: ApiDeps,
): Promise<string> {
  const id = (request.params.id as string).toLowerCase();
  await requireJob(deps, request.namespace, id);
  return id;
}

async function cancel(request: JobRequest, deps: ApiDeps) {
  const job = await deps.service.cancel(await commandedJob(request, deps), actorOf(request.principal));
  return json(200, await deps.service.jobDocument(job));
}

const signalParams = {
  id: jobIdParameter('The job (or a job above the step: see the step path).'),
  step: {
    schema: StepPath,
    description:
      'The step: a step of the job (`approve`), or a path to a step of a job beneath it: through a `workflow:` step (`publish/approve`: the step `approve` of the job `publish` runs) or a fan-out child by its index from 0 (`review[2]/approve`).',
  },
} as const satisfies ParameterSpecs;

async function signal(
  request: CheckedRequest<typeof signalParams, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const id = await commandedJob(request, deps);
  const { job, kept } = await deps.service.signal(
    id,
    request.params.step,
    request.json,
    actorOf(request.principal),
  );
  const document = await deps.service.jobDocument(job);
  if (kept === undefined) return json(200, document);
  return json(202, {
    buffered: true,
    message: `${kept}: the job keeps the signal until the step waits for it`,
    job: document,
  });
}

/** A child id pauses (or resumes) its top-level job, as cancel and retry do. */
async function pause(request: JobRequest, deps: ApiDeps) {
  const job = await deps.service.pause(await commandedJob(request, deps), actorOf(request.principal));
  return json(200, await deps.service.jobDocument(job));
}

async function resume(request: JobRequest, deps: ApiDeps) {
  const job = await deps.service.resume(await commandedJob(request, deps), actorOf(request.principal));
  return json(200, await deps.service.jobDocument(job));
}

const rerunFields = {
  from: {
    schema: StepName,
    description: 'The step to run again: it and every step after it start anew.',
    required: true,
  },
  input: {
    schema: AnyJsonObject,
    description:
      "A worker step's new input (sent in place of its merged input), or a signal step's new signal. Absent: as the step would compute it.",
  },
} as const;

async function rerun(
  request: CheckedRequest<{ id: ReturnType<typeof jobIdParameter> }, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const { from, input } = request.json as { from: string; input?: JsonObject };
  const job = await deps.service.rerun(
    await commandedJob(request, deps),
    from,
    input,
    actorOf(request.principal),
  );
  return json(200, await deps.service.jobDocument(job));
}

async function retry(request: JobRequest, deps: ApiDeps) {
  const job = await deps.service.retry(await commandedJob(request, deps), actorOf(request.principal));
  return json(200, await deps.service.jobDocument(job));
}

const eventsQuery = {
  limit: pageLimitParameter(500, 100),
  cursor: pageCursorParameter(ChildCursor),
} as const satisfies ParameterSpecs;

/** A job's history, oldest first, a page at a time (engine/job/history.ts). */
async function events(request: JobRequest<typeof eventsQuery>, deps: ApiDeps) {
  const job = await requireJob(deps, request.namespace, (request.params.id as string).toLowerCase());
  const page = historyPage(job.history, Number(request.query.cursor ?? 0), request.query.limit ?? 100);
  const body: Record<string, unknown> = {
    events: page.entries.map(({ at, ...entry }) => ({ ...entry, at: new Date(at).toISOString() })),
    dropped: page.dropped,
  };
  if (page.next !== undefined) body.cursor = String(page.next);
  return json(200, body);
}

const noSuchJob = refusal('No such job.');
const jobAnswer = (description: string) => ({ description, schema: JobDocument });
const jobParams = (description: string) => ({ id: jobIdParameter(description) }) as const;

export const jobRoutes = [
  route({
    method: 'GET',
    path: '/api/jobs',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'List jobs, newest first',
    query: listQuery,
    headers: {
      'If-None-Match': {
        schema: EntityTags,
        description:
          'With `ids`: the `ETag` of the summaries the caller holds: 304 while none of those jobs changed.',
      },
    },
    responses: {
      200: {
        description: 'A page of jobs (with `ids`: those jobs, tagged).',
        schema: JobPageDocument,
        headers: { ETag: 'With `ids`: the versions of the jobs named (weak).' },
      },
      304: {
        description: 'With `ids`: none of the jobs changed since the version named in `If-None-Match`.',
      },
      400: refusal('A cursor that is not one of this list, or more than 100 ids.'),
    },
    handle: listJobs,
  }),
  route({
    method: 'GET',
    path: '/api/job/{id}',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'The job document',
    params: jobParams('The job id (a child id works too).'),
    query: getQuery,
    headers: {
      'If-None-Match': {
        schema: EntityTags,
        description: 'The `ETag` of the copy the caller holds: 304 while the job is still at that version.',
      },
    },
    responses: {
      200: {
        ...jobAnswer('The job.'),
        headers: { ETag: "The job's version (weak): its revision and its fan-outs' finished children." },
      },
      304: { description: 'The job is still at the version named in `If-None-Match`.' },
      404: noSuchJob,
    },
    handle: getJob,
  }),
  route({
    method: 'GET',
    path: '/api/job/{id}/children',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "A fan-out step's children, in pages",
    params: jobParams('The parent job.'),
    query: childrenQuery,
    responses: {
      200: { description: 'A page of children.', schema: ChildrenPageDocument },
      400: refusal('No step of that name in the job.'),
      404: noSuchJob,
    },
    handle: children,
  }),
  route({
    method: 'GET',
    path: '/api/job/{id}/events',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "The job's history: what happened to it, oldest first, and who did it",
    description:
      'Each command names its actor (a token, the root or a schedule), each reply its worker (`x-worker`). A job keeps its first entry and its latest 199; `dropped` counts those left out between.',
    params: jobParams('The job id (a child id shows the child).'),
    query: eventsQuery,
    responses: {
      200: { description: 'A page of entries.', schema: JobEventsDocument },
      404: noSuchJob,
    },
    handle: events,
  }),
  route({
    method: 'DELETE',
    path: '/api/job/{id}',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: 'Cancel the job (a child id cancels its top-level job)',
    params: jobParams('The job id (a child id works too).'),
    responses: { 200: jobAnswer('Cancelled.'), 404: noSuchJob, 409: refusal('Already finished.') },
    handle: cancel,
  }),
  route({
    method: 'POST',
    path: '/api/job/{id}/signal/{step+}',
    auth: true,
    role: 'run',
    namespaced: true,
    summary:
      "Signal a step: a waiting signal step completes (its output is its input with the body's keys over it), a suspended step is sent again; a step that does not wait yet keeps the signal until it does",
    params: signalParams,
    body: {
      kind: 'json',
      what: 'the signal body',
      description: "Keys set over the step's input.",
      fields: {},
      otherFields: true,
    },
    responses: {
      200: jobAnswer('Taken: the step waited for it.'),
      202: {
        description:
          'Kept: the step does not wait yet (a signal step not ready, a worker step not suspended, a step beyond a workflow: step that has not started its called job); the job hands the signal over when it does.',
        schema: SignalKeptDocument,
      },
      400: refusal(
        "Not a step of the job that takes signals (a signal step or a worker step), a path that cannot lead to one (checked against the called workflows' definitions when a call has not started), a body that does not meet the step's signal schema, or a body that is not a JSON object.",
      ),
      404: noSuchJob,
      409: refusal(
        "Never to be taken: the step already ended (completed, skipped, failed, cancelled), the job ended, a signal for the step (or path) is already kept, or a path's fan-out has not created its children yet.",
      ),
      413: refusal(
        'A request the signal would send is larger than the limit, or the job keeps as many early signals (count or bytes) as it may.',
      ),
    },
    handle: signal,
  }),
  route({
    method: 'POST',
    path: '/api/job/{id}/rerun',
    auth: true,
    role: 'run',
    namespaced: true,
    summary:
      'Run an ended top-level job again from a step (it and the steps after it; earlier outputs kept, old attempts in the history), with a new input for that step if given',
    params: jobParams('The top-level job.'),
    body: {
      kind: 'json',
      what: 'the rerun',
      description: 'Where to run from, and with what.',
      fields: rerunFields,
      required: true,
    },
    responses: {
      200: jobAnswer('Running again.'),
      400: refusal(
        "No such step; a child or called job (rerun its top-level job); an input that does not meet the signal step's schema.",
      ),
      404: noSuchJob,
      409: refusal('The job has not ended.'),
      413: refusal('A request the rerun would send is larger than the limit.'),
    },
    handle: rerun,
  }),
  route({
    method: 'POST',
    path: '/api/job/{id}/retry',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: 'Run a failed or cancelled job again',
    params: jobParams('The job (a child id retries its top-level job).'),
    responses: {
      200: jobAnswer('Running again.'),
      404: noSuchJob,
      409: refusal('Not failed or cancelled.'),
      413: refusal('A request the retry would send is larger than the limit.'),
    },
    handle: retry,
  }),
  route({
    method: 'POST',
    path: '/api/job/{id}/pause',
    auth: true,
    role: 'run',
    namespaced: true,
    summary:
      'Pause the job and its children: nothing new is dispatched until resume; replies to requests already sent are stored, timers run on',
    params: jobParams('The job (a child id pauses its top-level job).'),
    responses: {
      200: jobAnswer('Paused (or already paused: nothing changed).'),
      404: noSuchJob,
      409: refusal('Already finished.'),
    },
    handle: pause,
  }),
  route({
    method: 'POST',
    path: '/api/job/{id}/resume',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: 'Resume a paused job: what became ready while paused (and retries held) is dispatched',
    params: jobParams('The job (a child id resumes its top-level job).'),
    responses: {
      200: jobAnswer('Running (or already running: nothing changed).'),
      404: noSuchJob,
      409: refusal('Already finished.'),
      413: refusal('A request the resume would send is larger than the limit.'),
    },
    handle: resume,
  }),
];
