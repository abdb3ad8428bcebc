import { createHash, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { refuseNonJsonBrowserWrite } from './browser-writes.js';
import { ApiError, type ApiResponse, errorResponse, type HostRequest, toApiError } from './http.js';
import { type RawQuery, rawQueryOf, singleValuedQuery } from './query.js';
import { type ApiDeps, matchRoute, type Route } from './router.js';
import { jobRoutes } from './routes/jobs.js';
import { scheduleRoutes } from './routes/schedules.js';
import { systemRoutes } from './routes/system.js';
import { workflowRoutes } from './routes/workflows.js';
import { withSecurityHeaders } from './security-headers.js';

export const routes: readonly Route[] = [...workflowRoutes, ...scheduleRoutes, ...jobRoutes, ...systemRoutes];

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
    const { route, params } = matchRoute(routes, request.method.toUpperCase(), request.path);
    if (route.auth && deps.token !== undefined) authorize(request.headers.authorization, deps.token);
    refuseNonJsonBrowserWrite(request);
    const query = singleValuedQuery(request.query);
    const response = await route.handle({ ...request, query, params }, deps);
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

function authorize(header: string | undefined, token: string): void {
  if (!header) throw new ApiError('unauthorized', 'this server requires "Authorization: Bearer <token>"');
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  // Digests of equal length are compared, so the time taken does not tell the token's length.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  if (!timingSafeEqual(digest(match?.[1] ?? ''), digest(token))) {
    throw new ApiError('forbidden', 'the token is not valid for this server');
  }
}

/** API Gateway (REST API, v1 proxy event) in, API Gateway result out. */
export async function handleApiGatewayEvent(
  event: APIGatewayProxyEvent,
  deps: ApiDeps,
): Promise<APIGatewayProxyResult> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (value !== undefined) headers[name.toLowerCase()] = value;
  const query = queryOf(event);
  const body = event.body
    ? event.isBase64Encoded
      ? Buffer.from(event.body, 'base64').toString('utf8')
      : event.body
    : '';
  const response = await handleApiRequest(
    { method: event.httpMethod, path: event.path, query, headers, body },
    deps,
  );
  return { statusCode: response.status, headers: response.headers ?? {}, body: response.body };
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
