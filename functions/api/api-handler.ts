import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  ANY_NAMESPACE,
  type Principal,
  principalOfContext,
  ROOT,
  roleAllows,
  seesNamespace,
} from '../../engine/index.js';
import { bearerOf, sameSecret } from './bearer.js';
import { refuseNonJsonBrowserWrite } from './browser-writes.js';
import { ApiError, type ApiResponse, errorResponse, type HostRequest, toApiError } from './http.js';
import { lowerCasedHeaders } from './lower-cased-headers.js';
import { namespacedPath } from './namespaced-path.js';
import { type RawQuery, rawQueryOf, singleValuedQuery } from './query.js';
import { checkRequest } from './request-checks.js';
import { routes } from './route-table.js';
import { type ApiDeps, matchRoute, type Route } from './router.js';
import { isScopedSecret } from './scoped-tokens.js';
import { withSecurityHeaders } from './security-headers.js';

export { routes };

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

/** Serves one request of api.md: the same code behind API Gateway and the local HTTP bridge. */
export async function handleApiRequest(request: HostRequest, deps: ApiDeps): Promise<ApiResponse> {
  return withSecurityHeaders(await answer(request, deps));
}

async function answer(request: HostRequest, deps: ApiDeps): Promise<ApiResponse> {
  try {
    const size = Buffer.byteLength(request.body);
    if (size > deps.maxBodyBytes) {
      throw new ApiError('payload_too_large', `the body is ${size} bytes; the limit is ${deps.maxBodyBytes}`);
    }
    const method = request.method.toUpperCase();
    const scoped = namespacedPath(request.path);
    const { route, params } = matchRoute(routes, method, scoped.path);
    if (scoped.explicit && !(route.auth && route.namespaced))
      throw new ApiError('not_found', `no route ${method} ${request.path}`);
    const principal = route.auth ? await authenticate(request, deps) : ROOT;
    if (route.auth) authorize(route, principal, scoped.namespace, method, request.path);
    refuseNonJsonBrowserWrite(request);
    const checked = checkRequest(route, {
      params,
      query: singleValuedQuery(request.query),
      body: request.body,
    });
    const response = await route.handle(
      { ...request, ...checked, namespace: scoped.namespace, principal },
      deps,
    );
    return request.method.toUpperCase() === 'HEAD' ? { ...response, body: '' } : response;
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') {
      deps.logger.error('request failed', {
        method: request.method,
        path: request.path,
        error,
      });
    } else if (apiError.code === 'store_unavailable') {
      const fields = { method: request.method, path: request.path, error: apiError.message };
      deps.logger.warn('request refused: the store is unavailable', fields);
    }
    return errorResponse(error);
  }
}

/**
 * Who a request acts as. Behind a Lambda authorizer (`-c auth=token`), who the authorizer found (the
 * host passes it as `request.principal`); a request without one is 401. Otherwise, a bearer token is
 * the root token (`--token`) or a scoped one; a secret that is neither (unknown, or revoked) is 401.
 * Without a bearer token: the root where the host leaves the check to others (open on loopback;
 * deployed, API Gateway checked the API key or IAM), else 401.
 */
async function authenticate(request: HostRequest, deps: ApiDeps): Promise<Principal> {
  if (deps.authorizer) {
    if (request.principal) return request.principal;
    throw new ApiError('unauthorized', 'the request carries no principal from the API authorizer');
  }
  const bearer = bearerOf(request.headers.authorization);
  if (bearer === undefined) {
    if (deps.token === undefined) return ROOT;
    throw new ApiError('unauthorized', 'this server requires "Authorization: Bearer <token>"');
  }
  if (deps.token !== undefined && sameSecret(bearer, deps.token)) return ROOT;
  // Without a root token, a bearer that is no scoped secret is the gateway's own credential (a
  // Cognito token, which API Gateway checked), or a caller of an open local server: the root.
  if (deps.token === undefined && !isScopedSecret(bearer)) return ROOT;
  const principal = await deps.service.tokens.principalOf(bearer);
  if (!principal)
    throw new ApiError('unauthorized', 'the token is not valid for this server (unknown or revoked)');
  return principal;
}

/**
 * Another namespace is as if absent to a token (404, telling nothing of what it holds); a role too
 * low for the route is 403.
 */
function authorize(
  route: Extract<Route, { auth: true }>,
  principal: Principal,
  namespace: string,
  method: string,
  path: string,
): void {
  if (route.namespaced && !seesNamespace(principal, namespace)) {
    throw new ApiError(
      'not_found',
      `${method} ${path}: not found (this token sees namespace "${principal.namespace}" only)`,
    );
  }
  if (route.everyNamespace && principal.namespace !== ANY_NAMESPACE) {
    throw new ApiError('forbidden', `${method} ${path} shows every namespace: it needs a token of "*"`);
  }
  const needed = route.role;
  if (!roleAllows(principal.role, needed)) {
    throw new ApiError(
      'forbidden',
      `${method} ${path} needs the role "${needed}"; this token has "${principal.role}"`,
    );
  }
}

/** API Gateway (a REST API's proxy event, or an HTTP API's in payload format 1.0) in, its result out. */
export async function handleApiGatewayEvent(
  event: APIGatewayProxyEvent,
  deps: ApiDeps,
): Promise<APIGatewayProxyResult> {
  const headers = lowerCasedHeaders(event.headers);
  const query = queryOf(event);
  const body = event.body
    ? event.isBase64Encoded
      ? Buffer.from(event.body, 'base64').toString('utf8')
      : event.body
    : '';
  // Behind the Lambda authorizer, its context is who the request acts as (the token is not looked up again).
  const principal = deps.authorizer ? principalOfContext(authorizerContextOf(event)) : undefined;
  const response = await handleApiRequest(
    { method: event.httpMethod, path: event.path, query, headers, body, principal },
    deps,
  );
  return { statusCode: response.status, headers: response.headers ?? {}, body: response.body };
}

/**
 * The Lambda authorizer's context: a REST API gives its keys in `requestContext.authorizer`; an HTTP
 * API (`-c api=http`) puts them under `authorizer.lambda` in its 2.0 events, and AWS's documentation
 * shows no 1.0 event with an authorizer's context, so both places are read (the nested one first).
 */
function authorizerContextOf(event: APIGatewayProxyEvent): unknown {
  const authorizer: unknown = event.requestContext?.authorizer;
  if (!authorizer || typeof authorizer !== 'object') return undefined;
  const nested = (authorizer as { lambda?: unknown }).lambda;
  return nested && typeof nested === 'object' ? nested : authorizer;
}

/**
 * Every value of each query parameter. The multi-valued map has them all; the single-valued one
 * keeps only the last of a repeated parameter, which would hide the repeat.
 */
function queryOf(event: APIGatewayProxyEvent): RawQuery {
  const multi = event.multiValueQueryStringParameters;
  const pairs = multi
    ? Object.entries(multi).flatMap(([name, values]) => (values ?? []).map((value) => [name, value] as const))
    : Object.entries(event.queryStringParameters ?? {}).flatMap(([name, value]) =>
        value === undefined ? [] : [[name, value] as const],
      );
  return rawQueryOf(pairs);
}
