import type { Role } from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { ApiService } from './api-service.js';
import { ApiError, type ApiRequest, type ApiResponse } from './http.js';

export interface ApiDeps {
  /** Everything the routes do, they do through it. */
  service: ApiService;
  /** Where requests that fail with an internal error are logged. */
  logger: Logger;
  /**
   * Locally, `--token`: the root token (`admin` of every namespace); every route but the dashboard's
   * own files then requires `Authorization: Bearer <token>` (or a scoped token). Undefined: a request
   * without a bearer token acts as the root (open on loopback; deployed, API Gateway checked the
   * stack's API key or IAM before the request got here).
   */
  token?: string;
  /**
   * Deployed with `-c auth=token`: API Gateway's Lambda authorizer checked each credentialed
   * request's bearer token and the host passes who it acts as (`HostRequest.principal`); a request
   * without one is 401, and no token is looked up again here.
   */
  authorizer?: boolean;
  /** @default 262144 (256 KiB) */
  maxBodyBytes: number;
  /** Prometheus text for `/metrics`. */
  metricsText?: () => Promise<string>;
  /** Static files of the dashboard, by path (`/`, `/assets/app.js`, …). */
  dashboard?: ReadonlyMap<string, { contentType: string; body: string }>;
  /** How often `?wait` looks for a change. @default 250 */
  waitPollMs?: number;
  /** Aborted when the host shuts down: long polls answer at once. */
  shutdown?: AbortSignal;
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI-style template: `/api/job/{id}/signal/{step}`. */
  path: string;
  /** false: served without credentials (the dashboard page and its files, the API description). */
  auth: boolean;
  /**
   * The least role that may call it (engine/access/roles.ts). @default 'read' for GET, 'admin' for
   * the rest (a new write route is closed until it says who may call it)
   */
  role?: Role;
  /** Also served as `/api/ns/{namespace}/…`, where it acts in that namespace (else in `default`). */
  namespaced?: boolean;
  /** Shows every namespace at once (`/metrics`): only a token of `*` may call it. */
  everyNamespace?: boolean;
  handle(request: ApiRequest, deps: ApiDeps): Promise<ApiResponse>;
}

interface Match {
  route: Route;
  params: Record<string, string>;
}

/** Finds the route for a method and path; an unknown path is 404, a known path with another method 405. */
export function matchRoute(routes: readonly Route[], method: string, path: string): Match {
  const segments = splitPath(path);
  let pathMatched = false;
  for (const route of routes) {
    const params = matchSegments(templateOf(route), segments);
    if (!params) continue;
    pathMatched = true;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
  }
  if (pathMatched) throw new ApiError('method_not_allowed', `${method} is not allowed on ${path}`);
  throw new ApiError('not_found', `no route ${method} ${path}`);
}

/** Each route's template, split once: every request is matched against all of them. */
const templates = new WeakMap<Route, string[]>();

function templateOf(route: Route): string[] {
  let template = templates.get(route);
  if (!template) {
    template = splitPath(route.path);
    templates.set(route, template);
  }
  return template;
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

function matchSegments(template: string[], actual: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  const greedy = template.at(-1)?.endsWith('+}');
  if (greedy ? actual.length < template.length : actual.length !== template.length) return undefined;
  for (let i = 0; i < template.length; i++) {
    const part = template[i] as string;
    if (part.startsWith('{')) {
      const name = part.slice(1, -1).replace(/\+$/, '');
      const value = greedy && i === template.length - 1 ? actual.slice(i).join('/') : (actual[i] as string);
      try {
        params[name] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (part !== actual[i]) {
      return undefined;
    }
  }
  return params;
}
