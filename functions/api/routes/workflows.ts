import {
  actorOf,
  definitionInNamespace,
  definitionShown,
  formatDefinitionError,
  inNamespace,
  qualifiedName,
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
import {
  DefinitionDocument,
  DisabledDocument,
  RegisteredDocument,
  StartedDocument,
  WorkflowJobIdsDocument,
  WorkflowListingDocument,
} from '../schemas/documents.js';
import { DateTime, JobId, Vhost, wholeNumber } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { workflowNameParameter } from '../schemas/shared-parameters.js';
import { parseStartAt } from '../start-at.js';
import { startJob } from '../start-job.js';
import type { WorkflowDefinitionDocument, WorkflowListing } from '../workflow-documents.js';

const MINUTE = 60_000;

const nameParams = { name: workflowNameParameter } as const satisfies ParameterSpecs;
type NamedRequest<Q extends ParameterSpecs = NoParameters> = CheckedRequest<
  typeof nameParams,
  Q,
  NoParameters
>;

/** The workflows of the request's namespace, by their plain names. */
async function listWorkflows(
  request: CheckedRequest<NoParameters, NoParameters, NoParameters>,
  { service }: ApiDeps,
) {
  const workflows = (await service.listWorkflows()).filter((workflow) =>
    inNamespace(workflow.name, request.namespace),
  );
  const entries: WorkflowListing[] = [];
  for (const workflow of workflows) {
    const counts = await service.countJobs(workflow.name);
    for (const vhost of workflow.vhosts.length ? workflow.vhosts : ['/']) {
      // Jobs waiting for someone and paused jobs have not ended: they count with the running ones.
      const running =
        workflow.vhosts.length > 1
          ? await service.countRunningOnVhost(workflow.name, vhost)
          : counts.running + counts.waiting + counts.paused;
      entries.push({
        name: splitQualifiedName(workflow.name).name,
        vhost,
        job_count: running,
        version: workflow.latestVersion,
        enabled: workflow.enabled,
        description: workflow.description ?? '',
        jobs: counts,
        versions: workflow.versions.map((v) => ({
          version: v.version,
          createdAt: new Date(v.createdAt).toISOString(),
        })),
      });
    }
  }
  return json(200, entries);
}

/** The request's `{name}` as stored: qualified by the request's namespace. */
function storedName(request: NamedRequest): string {
  return qualifiedName(request.namespace, request.params.name);
}

async function requireWorkflow(deps: ApiDeps, request: NamedRequest, version?: number) {
  const name = request.params.name;
  const stored = await deps.service.getWorkflow(storedName(request), version);
  if (!stored) {
    throw new ApiError(
      'not_found',
      version === undefined ? `no workflow named "${name}"` : `workflow "${name}" has no version ${version}`,
    );
  }
  return stored;
}

const workflowJobsQuery = {
  interval: {
    schema: wholeNumber({ min: 0 }),
    description: 'Completed within this many minutes (default 480; 0 = all).',
    emptyIsAbsent: true,
  },
  vhost: { schema: Vhost, description: 'Only jobs on this vhost.', emptyIsAbsent: true },
} as const satisfies ParameterSpecs;

/** As the original: running job ids, and ids completed within `interval` minutes (default 480, 0 = all). */
async function workflowJobs(request: NamedRequest<typeof workflowJobsQuery>, deps: ApiDeps) {
  const name = storedName(request);
  await requireWorkflow(deps, request);
  const interval = request.query.interval ?? 480;
  const { vhost } = request.query;
  return json(200, {
    // Jobs waiting for someone and paused jobs have not ended: listed with the running ones.
    running: [
      ...(await deps.service.jobIds({ workflow: name, status: 'running', vhost })),
      ...(await deps.service.jobIds({ workflow: name, status: 'waiting', vhost })),
      ...(await deps.service.jobIds({ workflow: name, status: 'paused', vhost })),
    ],
    // maxRunning: waiting for a slot, first to start first.
    queued: await deps.service.queuedJobIds(name, vhost),
    completed: await deps.service.jobIds({
      workflow: name,
      status: 'completed',
      vhost,
      endedSince: interval === 0 ? undefined : deps.service.now() - interval * MINUTE,
    }),
  });
}

const definitionQuery = {
  version: {
    schema: wholeNumber({ min: 1 }),
    description: 'This version instead of the latest.',
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;

async function definition(request: NamedRequest<typeof definitionQuery>, deps: ApiDeps) {
  const stored = await requireWorkflow(deps, request, request.query.version);
  const summary = (await deps.service.listWorkflows()).find((workflow) => workflow.name === stored.name);
  const document: WorkflowDefinitionDocument = {
    name: request.params.name,
    version: stored.version,
    enabled: stored.enabled,
    createdAt: new Date(stored.createdAt).toISOString(),
    definition: definitionShown(stored.definition),
    versions: (summary?.versions ?? []).map((v) => ({
      version: v.version,
      createdAt: new Date(v.createdAt).toISOString(),
    })),
  };
  return json(200, document);
}

/**
 * Registers a definition (YAML or JSON; a `workflows:` document holding it, or the bare workflow) in
 * the request's namespace. A document's `namespace:` must name that namespace; its `queuePrefix:`
 * prefixes the step queues (engine/definition/namespace.ts).
 */
async function register(request: NamedRequest, deps: ApiDeps) {
  const name = request.params.name;
  if (request.body.trim() === '')
    throw new ApiError('bad_request', 'the body must hold the workflow definition (YAML or JSON)');
  const { workflows, errors, namespace, queuePrefix } = deps.service.loadDefinitions(request.body, {
    file: `PUT /api/workflow/${name}`,
    allowBare: true,
  });
  if (errors.length) throw new ApiError('bad_request', errors.map(formatDefinitionError).join('\n'));
  if (workflows.length !== 1) {
    throw new ApiError(
      'bad_request',
      `the body must hold exactly one workflow, named "${name}"; it holds ${workflows.length}`,
    );
  }
  const workflow = workflows[0] as (typeof workflows)[number];
  if (workflow.name !== name) {
    throw new ApiError(
      'bad_request',
      `the workflow in the body is named "${workflow.name}", but the path names "${name}"`,
    );
  }
  if (namespace !== undefined && namespace !== request.namespace) {
    throw new ApiError(
      'bad_request',
      `the body names namespace "${namespace}", but the path acts in "${request.namespace}"`,
    );
  }
  // The namespace's queue prefix is the operator's: the manager applies it; a document may only state it.
  const { version, created } = await deps.service.registerWorkflow(
    definitionInNamespace(workflow, request.namespace),
    queuePrefix,
    actorOf(request.principal),
  );
  return json(created ? 201 : 200, { name, version, created });
}

async function disable(request: NamedRequest, deps: ApiDeps) {
  const name = request.params.name;
  if (!(await deps.service.disableWorkflow(storedName(request), actorOf(request.principal))))
    throw new ApiError('not_found', `no workflow named "${name}"`);
  return json(200, { name, enabled: false });
}

const startQuery = {
  id: { schema: JobId, description: 'The job id (also accepted as the body field `id`).' },
  version: {
    schema: wholeNumber({ min: 1 }),
    description: 'Run this version instead of the latest.',
    emptyIsAbsent: true,
  },
  vhost: { schema: Vhost, description: "Run on this vhost (one of the workflow's).", emptyIsAbsent: true },
  at: {
    schema: DateTime,
    description: 'A delayed start: later than now and within a year. The job is `scheduled` until then.',
  },
} as const satisfies ParameterSpecs;

const startBody = {
  id: { schema: JobId, description: 'The job id, as `?id=` (the field stays part of the input).' },
} as const satisfies ParameterSpecs;

/**
 * Starts a job: `?id=` or the body's `id` (as the original), `?version=`, `?at=` (a delayed start:
 * the job is `scheduled` until then); the body is the input.
 */
async function start(
  request: CheckedRequest<typeof nameParams, typeof startQuery, typeof startBody>,
  deps: ApiDeps,
) {
  const { id: queryId, version, vhost, at } = request.query;
  const bodyId = request.json.id;
  if (queryId && bodyId && queryId.toLowerCase() !== bodyId.toLowerCase()) {
    throw new ApiError('bad_request', `the body's "id" (${bodyId}) differs from ?id= (${queryId})`);
  }
  const startAt = at === undefined ? undefined : parseStartAt(at, deps.service.now());
  const { created, job } = await startJob(deps.service, request.namespace, {
    workflow: qualifiedName(request.namespace, request.params.name),
    id: queryId ?? bodyId,
    input: request.json,
    version,
    vhost,
    startAt,
    actor: actorOf(request.principal),
  });
  return json(created ? 201 : 200, { id: job.id });
}

const noSuchWorkflow = refusal('No such workflow.');

export const workflowRoutes = [
  route({
    method: 'GET',
    path: '/api/workflows',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'List workflows',
    responses: { 200: { description: 'One entry per workflow and vhost.', schema: WorkflowListingDocument } },
    handle: listWorkflows,
  }),
  route({
    method: 'GET',
    path: '/api/workflow/{name}',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "A workflow's running and recently completed job ids (as the original)",
    params: nameParams,
    query: workflowJobsQuery,
    responses: {
      200: { description: 'Job ids.', schema: WorkflowJobIdsDocument },
      404: noSuchWorkflow,
    },
    handle: workflowJobs,
  }),
  route({
    method: 'GET',
    path: '/api/workflow/{name}/definition',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'A definition and the list of versions',
    params: nameParams,
    query: definitionQuery,
    responses: {
      200: { description: 'The definition.', schema: DefinitionDocument },
      404: refusal('No such workflow or version.'),
    },
    handle: definition,
  }),
  route({
    method: 'PUT',
    path: '/api/workflow/{name}',
    auth: true,
    role: 'admin',
    namespaced: true,
    summary: 'Register a definition (a new version unless identical)',
    params: nameParams,
    body: {
      kind: 'definition',
      description:
        "YAML or JSON: a `workflows:` document holding this one workflow, or the bare workflow; its name must be the path's.",
    },
    responses: {
      200: { description: 'Identical to the current version.', schema: RegisteredDocument },
      201: { description: 'A new version.', schema: RegisteredDocument },
      400: refusal('Invalid definition, or its name or namespace differs from the path.'),
    },
    handle: register,
  }),
  route({
    method: 'DELETE',
    path: '/api/workflow/{name}',
    auth: true,
    role: 'admin',
    namespaced: true,
    summary: 'Disable the workflow: new jobs are refused, running jobs go on',
    params: nameParams,
    responses: { 200: { description: 'Disabled.', schema: DisabledDocument }, 404: noSuchWorkflow },
    handle: disable,
  }),
  route({
    method: 'POST',
    path: '/api/workflow/{name}',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: 'Start a job',
    params: nameParams,
    query: startQuery,
    body: {
      kind: 'json',
      what: 'the job input',
      description: 'The job input.',
      fields: startBody,
      otherFields: true,
    },
    responses: {
      200: { description: 'The same job already exists (idempotent start).', schema: StartedDocument },
      201: { description: 'Started.', schema: StartedDocument },
      400: refusal(
        "Input not a JSON object, the body's id differs from `?id=`, or an `at` impossible, past or over a year ahead.",
      ),
      404: refusal(
        "No such workflow or version, or the id is another namespace's job (as if absent; nothing is created).",
      ),
      409: refusal('The id is taken by a different job of this namespace, or the workflow is disabled.'),
      413: refusal('The body, or a request the start would send, is larger than the limit.'),
    },
    handle: start,
  }),
];
