import {
  definitionInNamespace,
  definitionShown,
  formatDefinitionError,
  inNamespace,
  qualifiedName,
  splitQualifiedName,
} from '../../../engine/index.js';
import { loadForDeployment } from '../../manager/queue-rules.js';
import { ApiError, type ApiRequest, json } from '../http.js';
import { intParam, readJsonObject } from '../read-body.js';
import type { ApiDeps, Route } from '../router.js';
import { parseStartAt } from '../start-at.js';
import type { WorkflowDefinitionDocument, WorkflowListing } from '../workflow-documents.js';

const MINUTE = 60_000;

/** The workflows of the request's namespace, by their plain names. */
async function listWorkflows(request: ApiRequest, { service }: ApiDeps) {
  const workflows = (await service.listWorkflows()).filter((workflow) =>
    inNamespace(workflow.name, request.namespace),
  );
  const entries: WorkflowListing[] = [];
  for (const workflow of workflows) {
    const counts = await service.countJobs(workflow.name);
    for (const vhost of workflow.vhosts.length ? workflow.vhosts : ['/']) {
      // Paused jobs have not ended: they count with the running ones.
      const running =
        workflow.vhosts.length > 1
          ? await service.countRunningOnVhost(workflow.name, vhost)
          : counts.running + counts.paused;
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
function storedName(request: ApiRequest): string {
  return qualifiedName(request.namespace, request.params.name as string);
}

async function requireWorkflow(deps: ApiDeps, request: ApiRequest, version?: number) {
  const name = request.params.name as string;
  const stored = await deps.service.getWorkflow(storedName(request), version);
  if (!stored) {
    throw new ApiError(
      'not_found',
      version === undefined ? `no workflow named "${name}"` : `workflow "${name}" has no version ${version}`,
    );
  }
  return stored;
}

/** As the original: running job ids, and ids completed within `interval` minutes (default 480, 0 = all). */
async function workflowJobs(request: ApiRequest, deps: ApiDeps) {
  const name = storedName(request);
  await requireWorkflow(deps, request);
  const interval = intParam(request, 'interval', { min: 0 }) ?? 480;
  const vhost = request.query.vhost || undefined;
  return json(200, {
    // Paused jobs have not ended: listed with the running ones.
    running: [
      ...(await deps.service.jobIds({ workflow: name, status: 'running', vhost })),
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

async function definition(request: ApiRequest, deps: ApiDeps) {
  const name = request.params.name as string;
  const version = intParam(request, 'version', { min: 1 });
  const stored = await requireWorkflow(deps, request, version);
  const summary = (await deps.service.listWorkflows()).find((workflow) => workflow.name === stored.name);
  const document: WorkflowDefinitionDocument = {
    name,
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
async function register(request: ApiRequest, deps: ApiDeps) {
  const name = request.params.name as string;
  if (request.body.trim() === '')
    throw new ApiError('bad_request', 'the body must hold the workflow definition (YAML or JSON)');
  const { workflows, errors, namespace, queuePrefix } = loadForDeployment(
    request.body,
    { file: `PUT /api/workflow/${name}`, allowBare: true },
    deps.service.queueRules,
  );
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
  );
  return json(created ? 201 : 200, { name, version, created });
}

async function disable(request: ApiRequest, deps: ApiDeps) {
  const name = request.params.name as string;
  if (!(await deps.service.disableWorkflow(storedName(request))))
    throw new ApiError('not_found', `no workflow named "${name}"`);
  return json(200, { name, enabled: false });
}

/**
 * Starts a job: `?id=` or the body's `id` (as the original), `?version=`, `?at=` (a delayed start:
 * the job is `scheduled` until then); the body is the input.
 */
async function startJob(request: ApiRequest, deps: ApiDeps) {
  const name = request.params.name as string;
  const input = readJsonObject(request, 'the job input');
  const queryId = request.query.id;
  const bodyId = input.id;
  if (bodyId !== undefined && (typeof bodyId !== 'string' || !UUID.test(bodyId))) {
    throw new ApiError('bad_request', `the body's "id" must be a UUID, got ${JSON.stringify(bodyId)}`);
  }
  if (queryId !== undefined && !UUID.test(queryId))
    throw new ApiError('bad_request', `"id" must be a UUID, got "${queryId}"`);
  if (queryId && typeof bodyId === 'string' && queryId.toLowerCase() !== bodyId.toLowerCase()) {
    throw new ApiError('bad_request', `the body's "id" (${bodyId}) differs from ?id= (${queryId})`);
  }
  const id = queryId ?? (typeof bodyId === 'string' ? bodyId : undefined);
  const version = intParam(request, 'version', { min: 1 });
  const vhost = request.query.vhost || undefined;
  const startAt =
    request.query.at === undefined ? undefined : parseStartAt(request.query.at, deps.service.now());
  const { created, job } = await deps.service.startJob({
    workflow: qualifiedName(request.namespace, name),
    id,
    input,
    version,
    vhost,
    startAt,
  });
  return json(created ? 201 : 200, { id: job.id });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const namespaced = { auth: true, namespaced: true } as const;

export const workflowRoutes: Route[] = [
  { method: 'GET', path: '/api/workflows', ...namespaced, handle: listWorkflows },
  { method: 'GET', path: '/api/workflow/{name}', ...namespaced, handle: workflowJobs },
  { method: 'GET', path: '/api/workflow/{name}/definition', ...namespaced, handle: definition },
  { method: 'PUT', path: '/api/workflow/{name}', ...namespaced, role: 'admin', handle: register },
  { method: 'DELETE', path: '/api/workflow/{name}', ...namespaced, role: 'admin', handle: disable },
  { method: 'POST', path: '/api/workflow/{name}', ...namespaced, role: 'run', handle: startJob },
];
