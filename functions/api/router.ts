import type * as z from 'zod/mini';
import type { HistoryKind, JsonObject, Role } from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { ApiService } from './api-service.js';
import { ApiError, type ApiRequest, type ApiResponse, type EventStreamStart } from './http.js';

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
  /**
   * The longest `?wait` holds a request, seconds. Deployed, 0: a held request holds a Lambda
   * invocation (and its share of the reserved concurrency), so callers poll with `If-None-Match`
   * instead (docs/deploying.md, "Live updates"). @default 25
   */
  maxWaitSeconds?: number;
  /**
   * Serve's live stream of committed history entries (`GET /api/events`); absent deployed, where
   * the route answers 501. Throws `too_many_requests` when it holds its most streams.
   */
  events?: {
    open(
      filter: { namespace: string; job?: string; workflow?: string; kinds?: ReadonlySet<HistoryKind> },
      lastEventId: string | undefined,
    ): EventStreamStart;
  };
  /** Aborted when the host shuts down: long polls answer at once. */
  shutdown?: AbortSignal;
}

/**
 * A path or query parameter of a route, or a field of its JSON body: its schema (its rule, checked
 * after percent-decoding by request-checks.ts) and what it means. Both land in `/openapi.json`.
 */
export interface ParameterSpec<S extends z.ZodMiniType = z.ZodMiniType> {
  schema: S;
  /** What it means (its rule is its schema's description). */
  description: string;
  /** A query parameter or body field the route cannot do without (path parameters always are). */
  required?: boolean;
  /** `?limit=` with no value is as if absent, so its default applies (as the original read it). */
  emptyIsAbsent?: boolean;
}

export type ParameterSpecs = Readonly<Record<string, ParameterSpec>>;

/** The values of checked parameters: optional ones may be absent. */
export type ParameterValues<S extends ParameterSpecs> = {
  [K in keyof S]: S[K]['required'] extends true
    ? z.output<S[K]['schema']>
    : z.output<S[K]['schema']> | undefined;
};

/** A route's request body. */
export type BodySpec =
  | {
      /** A JSON object (whatever the content type says), nested at most 64 levels. */
      kind: 'json';
      /** Names it in refusals: `the job input: body is not JSON`. */
      what: string;
      description: string;
      /** Its fields with a rule; others are refused unless `otherFields`. */
      fields: ParameterSpecs;
      /** Fields beyond `fields` are the caller's own (a job input): kept, not checked. */
      otherFields?: boolean;
      required?: boolean;
    }
  | {
      /** A workflow definition: YAML or JSON text, checked by the definition loader. */
      kind: 'definition';
      description: string;
    };

export interface ResponseSpec {
  description: string;
  /** The JSON body's schema. */
  schema?: z.ZodMiniType;
  /** A body that is not JSON. */
  contentType?: string;
  headers?: Readonly<Record<string, string>>;
}

/**
 * Who may call a route, decided for each route (no default: a new route without the decision does
 * not compile, and the scoped-tokens guard test needs its case).
 */
export type Access =
  | {
      /** Served without credentials (the dashboard page and its files, the API description). */
      auth: false;
    }
  | {
      auth: true;
      /** The least role that may call it (engine/access/roles.ts). */
      role: Role;
      /** Also served as `/api/ns/{namespace}/…`, where it acts in that namespace (else in `default`). */
      namespaced: boolean;
      /** Shows every namespace at once (`/metrics`): only a token of `*` may call it. */
      everyNamespace?: boolean;
    };

interface RouteDescription {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI-style template: `/api/job/{id}/signal/{step}`. */
  path: string;
  summary: string;
  description?: string;
  /** Headers it reads, for the API description. */
  headers?: ParameterSpecs;
  body?: BodySpec;
  /** What it answers besides the refusals every route of its kind shares (openapi.ts adds those). */
  responses: Readonly<Record<number, ResponseSpec>>;
}

export type Route = Access &
  RouteDescription & {
    /** Every `{param}` of the path. */
    params: ParameterSpecs;
    query: ParameterSpecs;
    handle(request: ApiRequest, deps: ApiDeps): Promise<ApiResponse>;
  };

/** The values of checked path parameters: every one is there. */
export type PathValues<S extends ParameterSpecs> = { [K in keyof S]: z.output<S[K]['schema']> };

/** The request a route's handler gets: its parameters and body checked against its schemas. */
export type CheckedRequest<
  P extends ParameterSpecs,
  Q extends ParameterSpecs,
  B extends ParameterSpecs,
> = Omit<ApiRequest, 'params' | 'query' | 'json'> & {
  params: PathValues<P>;
  query: ParameterValues<Q>;
  json: JsonObject & ParameterValues<B>;
};

/** A route without parameters (or body fields) of a kind. */
export type NoParameters = Record<never, never>;
const NONE: NoParameters = {};

/** A route whose handler is typed by its parameter schemas. */
export function route<
  const P extends ParameterSpecs = NoParameters,
  const Q extends ParameterSpecs = NoParameters,
  const B extends ParameterSpecs = NoParameters,
>(
  spec: Access &
    RouteDescription & {
      params?: P;
      query?: Q;
      body?: BodySpec & { fields?: B };
      handle(request: CheckedRequest<P, Q, B>, deps: ApiDeps): Promise<ApiResponse>;
    },
): Route {
  const { handle } = spec;
  return {
    ...spec,
    params: spec.params ?? NONE,
    query: spec.query ?? NONE,
    // request-checks.ts checked the request against these very specs before the handler runs.
    handle: (request, deps) => handle(request as unknown as CheckedRequest<P, Q, B>, deps),
  };
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
