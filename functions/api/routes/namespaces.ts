import {
  ANY_NAMESPACE,
  type NamespaceSettings,
  namespaceProblem,
  seesNamespace,
} from '../../../engine/index.js';
import type { NamespaceSettingsChange } from '../../manager/namespace-authority.js';
import { ApiError, type ApiRequest, json } from '../http.js';
import { readJsonObject } from '../read-body.js';
import type { ApiDeps, Route } from '../router.js';

/** A namespace's settings as the API shows them: the fields the operator set, and when. */
export interface NamespaceSettingsDocument {
  namespace: string;
  queuePrefix?: string;
  vhosts?: string[];
  updatedAt?: string;
}

function document(namespace: string, settings: NamespaceSettings | undefined): NamespaceSettingsDocument {
  if (!settings) return { namespace };
  return {
    namespace,
    ...(settings.queuePrefix === undefined ? {} : { queuePrefix: settings.queuePrefix }),
    ...(settings.vhosts === undefined ? {} : { vhosts: settings.vhosts }),
    updatedAt: new Date(settings.updatedAt).toISOString(),
  };
}

/** The namespaces the caller's token sees (all of them for `*`, else its own), with their settings. */
async function list(request: ApiRequest, { service }: ApiDeps) {
  const { principal } = request;
  const names = principal.namespace === ANY_NAMESPACE ? await service.namespaces() : [principal.namespace];
  const stored = new Map(
    (await service.namespaceSettings()).map((settings) => [settings.namespace, settings]),
  );
  return json(200, {
    namespaces: names,
    role: principal.role,
    scope: principal.namespace,
    settings: names.map((name) => document(name, stored.get(name))),
  });
}

function pathNamespace(request: ApiRequest): string {
  const namespace = request.params.namespace as string;
  const problem = namespaceProblem(namespace);
  if (problem) throw new ApiError('bad_request', problem);
  return namespace;
}

/** One namespace's settings: a token of another namespace finds nothing (404), as for its workflows. */
async function show(request: ApiRequest, { service }: ApiDeps) {
  const namespace = pathNamespace(request);
  if (!seesNamespace(request.principal, namespace)) {
    throw new ApiError(
      'not_found',
      `no namespace "${namespace}" (this token sees "${request.principal.namespace}" only)`,
    );
  }
  return json(200, document(namespace, await service.namespaceSettingsOf(namespace)));
}

/**
 * The operator sets a namespace's queue prefix and allowed vhosts (a token of `*` with `admin`):
 * `{"queuePrefix": "team-a.", "vhosts": ["/", "billing"]}`; a key left out stays as it is, `null`
 * takes it away.
 */
async function change(request: ApiRequest, { service }: ApiDeps) {
  const namespace = pathNamespace(request);
  const body = readJsonObject(request, 'the namespace settings');
  const unknown = Object.keys(body).filter((key) => key !== 'queuePrefix' && key !== 'vhosts');
  if (unknown.length) {
    throw new ApiError(
      'bad_request',
      `unknown field ${unknown.map((key) => `"${key}"`).join(', ')}: a namespace has "queuePrefix" and "vhosts"`,
    );
  }
  const update: NamespaceSettingsChange = { namespace };
  if ('queuePrefix' in body) {
    const prefix = body.queuePrefix;
    if (prefix !== null && typeof prefix !== 'string') {
      throw new ApiError('bad_request', `"queuePrefix" must be a string, or null to remove it`);
    }
    update.queuePrefix = prefix;
  }
  if ('vhosts' in body) {
    const vhosts = body.vhosts;
    if (vhosts !== null && (!Array.isArray(vhosts) || vhosts.some((vhost) => typeof vhost !== 'string'))) {
      throw new ApiError('bad_request', `"vhosts" must be a list of vhost names, or null to remove it`);
    }
    update.vhosts = vhosts as string[] | null;
  }
  return json(200, document(namespace, await service.changeNamespace(update)));
}

export const namespaceRoutes: Route[] = [
  { method: 'GET', path: '/api/namespaces', auth: true, handle: list },
  { method: 'GET', path: '/api/namespaces/{namespace}', auth: true, handle: show },
  {
    method: 'PUT',
    path: '/api/namespaces/{namespace}',
    auth: true,
    everyNamespace: true,
    role: 'admin',
    handle: change,
  },
];
