import * as z from 'zod/mini';
import { ANY_NAMESPACE, actorOf, type NamespaceSettings, seesNamespace } from '../../../engine/index.js';
import type { NamespaceSettingsChange } from '../api-service.js';
import { ApiError, json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { NamespaceSettingsDocument, NamespacesDocument } from '../schemas/documents.js';
import { NamespaceName, QueuePrefix, Vhost } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';

/** A namespace's settings as the API answers them (the CLI reads this shape). */
export type SettingsDocument = z.infer<typeof NamespaceSettingsDocument>;

function document(namespace: string, settings: NamespaceSettings | undefined): SettingsDocument {
  if (!settings) return { namespace };
  return {
    namespace,
    ...(settings.queuePrefix === undefined ? {} : { queuePrefix: settings.queuePrefix }),
    ...(settings.vhosts === undefined ? {} : { vhosts: settings.vhosts }),
    updatedAt: new Date(settings.updatedAt).toISOString(),
  };
}

/** The namespaces the caller's token sees (all of them for `*`, else its own), with their settings. */
async function list(request: CheckedRequest<NoParameters, NoParameters, NoParameters>, { service }: ApiDeps) {
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

const namespaceParams = {
  namespace: { schema: NamespaceName, description: 'The namespace.' },
} as const satisfies ParameterSpecs;

/** One namespace's settings: a token of another namespace finds nothing (404), as for its workflows. */
async function show(
  request: CheckedRequest<typeof namespaceParams, NoParameters, NoParameters>,
  { service }: ApiDeps,
) {
  const { namespace } = request.params;
  if (!seesNamespace(request.principal, namespace)) {
    throw new ApiError(
      'not_found',
      `no namespace "${namespace}" (this token sees "${request.principal.namespace}" only)`,
    );
  }
  return json(200, document(namespace, await service.namespaceSettingsOf(namespace)));
}

const settingsFields = {
  queuePrefix: {
    schema: z.nullable(QueuePrefix),
    description: 'Every step queue of the namespace starts with it; `null` takes it away.',
  },
  vhosts: {
    schema: z.nullable(z.array(Vhost).check(z.maxLength(16))),
    description: 'The vhosts its workflows may use (at most 16); `null` takes the list away.',
  },
} as const satisfies ParameterSpecs;

/**
 * The operator sets a namespace's queue prefix and allowed vhosts (a token of `*` with `admin`):
 * a key left out stays as it is, `null` takes it away.
 */
async function change(
  request: CheckedRequest<typeof namespaceParams, NoParameters, typeof settingsFields>,
  { service }: ApiDeps,
) {
  const { namespace } = request.params;
  const update: NamespaceSettingsChange = { namespace };
  if (request.json.queuePrefix !== undefined) update.queuePrefix = request.json.queuePrefix;
  if (request.json.vhosts !== undefined) update.vhosts = request.json.vhosts;
  return json(200, document(namespace, await service.changeNamespace(update, actorOf(request.principal))));
}

export const namespaceRoutes = [
  route({
    method: 'GET',
    path: '/api/namespaces',
    auth: true,
    role: 'read',
    namespaced: false,
    summary: 'The namespaces the caller sees, with their settings',
    description:
      'For a token of every namespace (`*`, and the root): every namespace that holds a workflow or has settings, and `default`; for a scoped token: its own namespace. Each with what the operator set for it.',
    responses: {
      200: {
        description: 'The namespaces, the role, the scope and the settings.',
        schema: NamespacesDocument,
      },
    },
    handle: list,
  }),
  route({
    method: 'GET',
    path: '/api/namespaces/{namespace}',
    auth: true,
    role: 'read',
    namespaced: false,
    summary: "A namespace's settings: its queue prefix and allowed vhosts",
    params: namespaceParams,
    responses: {
      200: { description: 'The settings (only the keys set).', schema: NamespaceSettingsDocument },
      404: refusal('A namespace this token does not see.'),
    },
    handle: show,
  }),
  route({
    method: 'PUT',
    path: '/api/namespaces/{namespace}',
    auth: true,
    role: 'admin',
    namespaced: false,
    everyNamespace: true,
    summary: "Set a namespace's queue prefix and allowed vhosts (a token of every namespace, admin)",
    description:
      "Only the operator decides which queues and vhosts a namespace may use: every step queue of its workflows then starts with the prefix, no other namespace may use it, and its jobs run only on the vhosts listed (workflows.md, Namespaces). A prefix that overlaps another namespace's, or that another namespace's workflows already send under, is refused.",
    params: namespaceParams,
    body: {
      kind: 'json',
      what: 'the namespace settings',
      description: 'The keys to change.',
      fields: settingsFields,
    },
    responses: {
      200: { description: 'The settings as stored.', schema: NamespaceSettingsDocument },
      400: refusal(
        'A prefix or vhost that cannot be one, or a prefix another namespace holds: nothing changed.',
      ),
      403: refusal('Not a token of every namespace with the admin role.'),
      404: refusal('No such route (a path that is not one).'),
    },
    handle: change,
  }),
];
