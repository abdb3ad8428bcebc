import { qualifiedName } from '../../../engine/index.js';
import { ApiError, type ApiRequest, type ApiResponse, json } from '../http.js';
import { openApiDocument } from '../openapi.js';
import type { ApiDeps, Route } from '../router.js';
import { dashboardPolicy } from '../security-headers.js';

async function health(_: ApiRequest, { service }: ApiDeps) {
  const { store, bus } = await service.health();
  const healthy = store === 'ok' && bus === 'ok';
  return json(healthy ? 200 : 503, { status: healthy ? 'ok' : 'unavailable', store, bus });
}

/** Each step queue of the registered workflows: ready messages and consumers, as the bus sees them. */
async function queues(request: ApiRequest, { service }: ApiDeps) {
  const workflow = request.query.workflow
    ? qualifiedName(request.namespace, request.query.workflow)
    : undefined;
  return json(200, { queues: await service.queues(request.namespace, workflow) });
}

async function metrics(_: ApiRequest, deps: ApiDeps): Promise<ApiResponse> {
  if (!deps.metricsText) throw new ApiError('not_found', 'metrics are not kept by this host');
  return {
    status: 200,
    headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
    body: await deps.metricsText(),
  };
}

async function openApi() {
  return json(200, openApiDocument());
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
  { method: 'GET', path: '/healthz', auth: true, handle: health },
  { method: 'GET', path: '/metrics', auth: true, everyNamespace: true, handle: metrics },
  { method: 'GET', path: '/api/queues', auth: true, namespaced: true, handle: queues },
  { method: 'GET', path: '/openapi.json', auth: false, handle: openApi },
  { method: 'GET', path: '/', auth: false, handle: async (_, deps) => dashboardFile('/', deps) },
  {
    method: 'GET',
    path: '/assets/{file+}',
    auth: false,
    handle: async (request, deps) => dashboardFile(`/assets/${request.params.file}`, deps),
  },
];
