import { mayGrant, type Role, seesNamespace, tokenScopeProblem } from '../../../engine/index.js';
import { ApiError, type ApiRequest, json } from '../http.js';
import { readJsonObject } from '../read-body.js';
import type { ApiDeps, Route } from '../router.js';

const MAX_DESCRIPTION = 200;
const KEYS = ['namespace', 'role', 'description'];

/**
 * `POST /api/tokens {namespace, role, description}`: a new scoped token; its secret is in this answer
 * and nowhere else. An admin grants within its own scope only.
 */
async function createToken(request: ApiRequest, deps: ApiDeps) {
  const body = readJsonObject(request, 'the token request');
  const unknown = Object.keys(body).filter((key) => !KEYS.includes(key));
  if (unknown.length) {
    throw new ApiError(
      'bad_request',
      `unknown field ${JSON.stringify(unknown[0])}: a token takes ${KEYS.join(', ')}`,
    );
  }
  const { namespace, role, description = '' } = body;
  const problem = tokenScopeProblem(namespace, role);
  if (problem) throw new ApiError('bad_request', problem);
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION) {
    throw new ApiError(
      'bad_request',
      `"description" must be a string of at most ${MAX_DESCRIPTION} characters`,
    );
  }
  const scope = { namespace: namespace as string, role: role as Role, description };
  if (!mayGrant(request.principal, scope)) {
    throw new ApiError(
      'forbidden',
      `this token administers namespace "${request.principal.namespace}" only; it cannot grant "${scope.namespace}"`,
    );
  }
  const { token, secret } = await deps.service.tokens.create(scope);
  return json(201, { ...token, secret }, { 'cache-control': 'no-store' });
}

/** The tokens of the namespaces the caller administers, without their secrets or hashes. */
async function listTokens(request: ApiRequest, deps: ApiDeps) {
  const tokens = (await deps.service.tokens.list()).filter((token) =>
    seesNamespace(request.principal, token.namespace),
  );
  return json(200, { tokens });
}

/** Revokes a token at once (deployed, other instances within their cache delay). */
async function revokeToken(request: ApiRequest, deps: ApiDeps) {
  const id = request.params.id as string;
  const token = await deps.service.tokens.get(id);
  if (
    !token ||
    !seesNamespace(request.principal, token.namespace) ||
    !(await deps.service.tokens.revoke(id))
  ) {
    throw new ApiError('not_found', `no token ${id}`);
  }
  return json(200, { id, revoked: true });
}

export const tokenRoutes: Route[] = [
  { method: 'POST', path: '/api/tokens', auth: true, role: 'admin', handle: createToken },
  { method: 'GET', path: '/api/tokens', auth: true, role: 'admin', handle: listTokens },
  { method: 'DELETE', path: '/api/tokens/{id}', auth: true, role: 'admin', handle: revokeToken },
];
