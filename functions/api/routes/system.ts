import { qualifiedName } from '../../../engine/index.js';
import { ApiError, type ApiRequest, type ApiResponse, json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  type Route,
  route,
} from '../router.js';
import { HealthDocument, QueuesDocument } from '../schemas/documents.js';
import { AssetPath, WorkflowName } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { dashboardPolicy } from '../security-headers.js';

async function health(_: ApiRequest, { service }: ApiDeps) {
  const { store, bus } = await service.health();
  const healthy = store === 'ok' && bus === 'ok';
  return json(healthy ? 200 : 503, { status: healthy ? 'ok' : 'unavailable', store, bus });
}

const queuesQuery = {
  workflow: { schema: WorkflowName, description: 'Only the queues of this workflow.', emptyIsAbsent: true },
} as const satisfies ParameterSpecs;

/** Each step queue of the registered workflows: ready messages and consumers, as the bus sees them. */
async function queues(
  request: CheckedRequest<NoParameters, typeof queuesQuery, NoParameters>,
  { service }: ApiDeps,
) {
  const { workflow } = request.query;
  const stored = workflow === undefined ? undefined : qualifiedName(request.namespace, workflow);
  return json(200, { queues: await service.queues(request.namespace, stored) });
}

async function metrics(_: ApiRequest, deps: ApiDeps): Promise<ApiResponse> {
  if (!deps.metricsText) throw new ApiError('not_found', 'metrics are not kept by this host');
  return {
    status: 200,
    headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
    body: await deps.metricsText(),
  };
}

function dashboardFile(path: string, deps: ApiDeps): ApiResponse {
  const file = deps.dashboard?.get(path);
  if (!file) {
    if (path === '/') {
      return {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<!doctype html><title>Switchyard</title><p>The dashboard is not bundled in this build. The API is at <a href="/openapi.json">/openapi.json</a>.</p>',
      };
    }
    throw new ApiError('not_found', `no dashboard file ${path}`);
  }
  return {
    status: 200,
    headers: {
      'content-type': file.contentType,
      'cache-control': path === '/' ? 'no-cache' : 'public, max-age=3600',
      ...(path === '/' ? { 'content-security-policy': dashboardPolicy(file.body) } : {}),
    },
    body: file.body,
  };
}

export const systemRoutes: Route[] = [
  route({
    method: 'GET',
    path: '/healthz',
    auth: true,
    role: 'read',
    namespaced: false,
    summary: 'Health of the store and the bus',
    responses: {
      200: { description: 'Both reachable.', schema: HealthDocument },
      503: {
        description: "One is not, or the store's last write failed on storage (a full disk).",
        schema: HealthDocument,
      },
    },
    handle: health,
  }),
  route({
    method: 'GET',
    path: '/metrics',
    auth: true,
    role: 'read',
    namespaced: false,
    everyNamespace: true,
    summary: 'Counters and histograms (Prometheus text format)',
    responses: {
      200: { description: 'Metrics.', contentType: 'text/plain' },
      404: refusal('This host keeps no metrics.'),
    },
    handle: metrics,
  }),
  route({
    method: 'GET',
    path: '/api/queues',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: 'Each step queue of the registered workflows, as the broker sees it',
    description:
      'The queues of the latest version of each workflow (or of `workflow`), each with the steps that send to it and what the bus says of it: `exists` (false: not declared yet; the check never creates it), `ready` messages, `consumers` (a number, or `unknown` on SQS), `inFlight` (SQS), or `error` when the broker could not be asked.',
    query: queuesQuery,
    responses: { 200: { description: 'The queues.', schema: QueuesDocument } },
    handle: queues,
  }),
  route({
    method: 'GET',
    path: '/',
    auth: false,
    summary: 'The dashboard',
    responses: { 200: { description: 'HTML.', contentType: 'text/html' } },
    handle: async (_, deps) => dashboardFile('/', deps),
  }),
  route({
    method: 'GET',
    path: '/assets/{file+}',
    auth: false,
    summary: "The dashboard's files",
    params: { file: { schema: AssetPath, description: 'The file, beneath `/assets/`.' } },
    responses: { 200: { description: 'A file.', contentType: '*/*' }, 404: refusal('No such file.') },
    handle: async (request, deps) => dashboardFile(`/assets/${request.params.file}`, deps),
  }),
];
