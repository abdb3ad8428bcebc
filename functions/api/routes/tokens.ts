import * as z from 'zod/mini';
import { actorOf, mayGrant, ROLES, seesNamespace } from '../../../engine/index.js';
import { ApiError, json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { RevokedDocument, TokenCreatedDocument, TokensDocument } from '../schemas/documents.js';
import { NamespaceName, TokenId } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';

const MAX_DESCRIPTION = 200;

const tokenFields = {
  namespace: {
    schema: z.union([NamespaceName, z.literal('*')]).check(
      z.meta({
        description: 'a namespace (a letter, then letters, digits, "_" or "-", at most 64), or "*"',
      }),
    ),
    description: 'The namespace the token acts in, or `*` for every namespace.',
    required: true,
  },
  role: {
    schema: z.enum(ROLES).check(z.meta({ description: `one of ${ROLES.join(', ')}` })),
    description: 'What it may do (api.md, "Namespaces and scoped tokens").',
    required: true,
  },
  description: {
    schema: z
      .string()
      .check(
        z.maxLength(MAX_DESCRIPTION),
        z.meta({ description: `text of at most ${MAX_DESCRIPTION} characters` }),
      ),
    description: 'Who or what it is for.',
  },
} as const satisfies ParameterSpecs;

/**
 * `POST /api/tokens {namespace, role, description}`: a new scoped token; its secret is in this answer
 * and nowhere else. An admin grants within its own scope only.
 */
async function createToken(
  request: CheckedRequest<NoParameters, NoParameters, typeof tokenFields>,
  deps: ApiDeps,
) {
  const { namespace, role, description = '' } = request.json;
  const scope = { namespace, role, description };
  if (!mayGrant(request.principal, scope)) {
    throw new ApiError(
      'forbidden',
      `this token administers namespace "${request.principal.namespace}" only; it cannot grant "${scope.namespace}"`,
    );
  }
  const { token, secret } = await deps.service.tokens.create(scope);
  await deps.service.audit(
    actorOf(request.principal),
    'token.created',
    token.namespace,
    token.id,
    token.role,
  );
  return json(201, { ...token, secret }, { 'cache-control': 'no-store' });
}

/** The tokens of the namespaces the caller administers, without their secrets or hashes. */
async function listTokens(request: CheckedRequest<NoParameters, NoParameters, NoParameters>, deps: ApiDeps) {
  const tokens = (await deps.service.tokens.list()).filter((token) =>
    seesNamespace(request.principal, token.namespace),
  );
  return json(200, { tokens });
}

const tokenParams = {
  id: { schema: TokenId, description: 'The token (its `id` in the listing).' },
} as const satisfies ParameterSpecs;

/** Revokes a token at once (deployed, other instances within their cache delay). */
async function revokeToken(
  request: CheckedRequest<typeof tokenParams, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const { id } = request.params;
  const token = await deps.service.tokens.get(id);
  if (
    !token ||
    !seesNamespace(request.principal, token.namespace) ||
    !(await deps.service.tokens.revoke(id))
  ) {
    throw new ApiError('not_found', `no token ${id}`);
  }
  await deps.service.audit(actorOf(request.principal), 'token.revoked', token.namespace, id, token.role);
  return json(200, { id, revoked: true });
}

export const tokenRoutes = [
  route({
    method: 'POST',
    path: '/api/tokens',
    auth: true,
    role: 'admin',
    namespaced: false,
    summary: 'Create a scoped token (admin)',
    description:
      'The secret is in this answer only: the store keeps its SHA-256 and the metadata. A namespace admin grants its own namespace only (403 otherwise).',
    body: { kind: 'json', what: 'the token request', description: "The token's scope.", fields: tokenFields },
    responses: {
      201: { description: 'The token, with its secret.', schema: TokenCreatedDocument },
      400: refusal('A bad namespace, an unknown role, an unknown field: nothing is created.'),
      403: refusal('The caller is not an admin of that scope.'),
    },
    handle: createToken,
  }),
  route({
    method: 'GET',
    path: '/api/tokens',
    auth: true,
    role: 'admin',
    namespaced: false,
    summary: 'List the tokens the caller administers (admin), without secrets',
    responses: { 200: { description: 'The tokens.', schema: TokensDocument } },
    handle: listTokens,
  }),
  route({
    method: 'DELETE',
    path: '/api/tokens/{id}',
    auth: true,
    role: 'admin',
    namespaced: false,
    summary: 'Revoke a token (admin), at once',
    description:
      'Locally at once. Deployed, another API instance may still accept it for up to 30 seconds (its cache of tokens found).',
    params: tokenParams,
    responses: { 200: { description: 'Revoked.', schema: RevokedDocument }, 404: refusal('No such token.') },
    handle: revokeToken,
  }),
];
