import * as z from 'zod/mini';
import type { BodySpec, ParameterSpec, ParameterSpecs, ResponseSpec, Route } from './router.js';
import { ErrorDocument } from './schemas/documents.js';
import { namespaceParameter } from './schemas/shared-parameters.js';

/*
 * The OpenAPI 3.1 description of the routes, made from their own declarations: the schemas that
 * check each request (request-checks.ts) are the ones described here, so every documented rule is
 * enforced. Schemas given an `id` (schemas/documents.ts) become components.
 */

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown> & { responses: Record<string, ResponseObject> };
interface ResponseObject {
  description: string;
  content?: Record<string, { schema: JsonSchema }>;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

const INFO = {
  title: 'Switchyard',
  version: '1',
  description:
    'A workflow manager for queue-driven microservices. Every error is `{"error": {"code", "message"}}`. A query parameter given more than once is refused (400) on every route; a parameter the route does not declare is ignored. Every path and query parameter is checked against its schema after percent-decoding (400 naming the parameter and its rule): a workflow name never holds a `/`, so `team-b%2Fbilling` is refused, not read as another namespace\'s workflow. Request bodies are read as JSON whatever their content type says.\n\nNamespaces: each route under `/api/workflow…`, `/api/workflows`, `/api/job…`, `/api/jobs`, `/api/schedules` and `/api/queues` is also served as `/api/ns/{namespace}/…`, acting in that namespace; without the prefix it acts in `default`. Workflow names in paths, queries and answers are plain names within the namespace; jobs carry `namespace`.\n\nRoles (scoped tokens, `POST /api/tokens`): `read` may call the GET routes; `run` also starts, cancels, retries, signals, pauses and resumes jobs; `admin` also registers (PUT) and disables (DELETE) workflows and creates, lists and revokes tokens. A token of one namespace gets 404 for every other namespace, as if absent; 403 when its role is too low; 401 when the token is unknown or revoked. `/metrics` needs a token of every namespace (`*`).',
};

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Locally, the root token of `switchyard serve --token`; anywhere, a scoped token (`POST /api/tokens`).',
  },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Deployed behind API Gateway.' },
};

/** The description of the API made of `routes`. */
export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const schemas = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const method = route.method.toLowerCase();
    paths[route.path] = { ...paths[route.path], [method]: operation(route, schemas, false) };
    if (route.auth && route.namespaced) {
      const scoped = namespacedTemplate(route.path);
      paths[scoped] = { ...paths[scoped], [method]: operation(route, schemas, true) };
    }
  }
  return {
    openapi: '3.1.0',
    info: INFO,
    components: { securitySchemes: SECURITY_SCHEMES, schemas: schemas.all() },
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
  };
}

/** `/api/jobs` as served beneath a namespace: `/api/ns/{namespace}/jobs`. */
export function namespacedTemplate(path: string): string {
  return `/api/ns/{namespace}${path.slice('/api'.length)}`;
}

function operation(route: Route, schemas: Components, scoped: boolean): Operation {
  const parameters = [
    ...(scoped ? [parameter('namespace', 'path', namespaceParameter, schemas)] : []),
    ...templateNames(route.path).map((name) => {
      const spec = route.params[name.replace(/\+$/, '')] as ParameterSpec;
      return parameter(name, 'path', spec, schemas);
    }),
    ...Object.entries(route.query).map(([name, spec]) => parameter(name, 'query', spec, schemas)),
    ...Object.entries(route.headers ?? {}).map(([name, spec]) => parameter(name, 'header', spec, schemas)),
  ];
  const responses: Record<string, ResponseObject> = {};
  for (const [status, spec] of Object.entries(route.responses)) responses[status] = response(spec, schemas);
  for (const [status, description] of sharedRefusals(route, scoped)) {
    const listed = responses[status];
    responses[status] = listed
      ? { ...listed, description: `${listed.description} Or: ${lowerFirst(description)}` }
      : response({ description, schema: ErrorDocument }, schemas);
  }
  return {
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.auth ? {} : { security: [] }),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route.body, schemas) } : {}),
    responses,
  };
}

/** What every route of a kind may answer, wherever its handler stands: checked before it runs. */
function sharedRefusals(route: Route, scoped: boolean): [string, string][] {
  const checked =
    scoped ||
    Object.keys(route.params).length > 0 ||
    Object.keys(route.query).length > 0 ||
    route.body?.kind === 'json';
  const refusals: [string, string][] = [];
  if (checked) refusals.push(['400', 'A parameter or body field that breaks its rule.']);
  refusals.push(['400', 'A query parameter given more than once.']);
  // Any request's body is measured before its route is found; a browser's write is checked on any.
  refusals.push(['413', 'The body is larger than the limit (256 KiB unless set otherwise).']);
  if (route.method !== 'GET') {
    refusals.push([
      '415',
      'From a browser (`Origin` or `Sec-Fetch-Site` sent): a body not sent as application/json.',
    ]);
  }
  if (!route.auth) return refusals;
  refusals.push([
    '401',
    'No credentials where the server requires them, or a token that is unknown or revoked.',
  ]);
  refusals.push([
    '403',
    route.everyNamespace
      ? "The token's role is too low, or the token is not one of every namespace (`*`)."
      : "The token's role is too low for the route.",
  ]);
  if (route.namespaced) refusals.push(['404', 'A namespace the token does not see (as if absent).']);
  if (route.body) refusals.push(['413', 'The body is larger than the limit (256 KiB unless set otherwise).']);
  if (route.body && route.method !== 'GET') {
    refusals.push([
      '415',
      'From a browser (`Origin` or `Sec-Fetch-Site` sent): a body not sent as application/json.',
    ]);
  }
  refusals.push([
    '503',
    'The store cannot be reached or cannot take the write (`Retry-After` says when to try again).',
  ]);
  return refusals;
}

function parameter(
  name: string,
  where: 'path' | 'query' | 'header',
  spec: ParameterSpec,
  schemas: Components,
) {
  return {
    name,
    in: where,
    required: where === 'path' || spec.required === true,
    description: spec.description,
    ...(spec.emptyIsAbsent ? { allowEmptyValue: true } : {}),
    schema: schemas.of(spec.schema),
  };
}

function requestBody(body: BodySpec, schemas: Components) {
  if (body.kind === 'definition') {
    return {
      required: true,
      description: body.description,
      content: {
        'application/yaml': { schema: { type: 'string' } },
        'application/json': { schema: { type: 'object' } },
      },
    };
  }
  return {
    required: body.required === true,
    description: body.description,
    content: {
      'application/json': { schema: fieldsSchema(body.fields, body.otherFields === true, schemas) },
    },
  };
}

function fieldsSchema(fields: ParameterSpecs, otherFields: boolean, schemas: Components): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, spec] of Object.entries(fields)) {
    properties[name] = { ...schemas.of(spec.schema), description: spec.description };
  }
  const required = Object.entries(fields)
    .filter(([, spec]) => spec.required)
    .map(([name]) => name);
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    ...(otherFields ? {} : { additionalProperties: false }),
  };
}

function response(spec: ResponseSpec, schemas: Components): ResponseObject {
  const object: ResponseObject = { description: spec.description };
  if (spec.schema) object.content = { 'application/json': { schema: schemas.of(spec.schema) } };
  else if (spec.contentType) object.content = { [spec.contentType]: { schema: { type: 'string' } } };
  if (spec.headers) {
    object.headers = Object.fromEntries(
      Object.entries(spec.headers).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    );
  }
  return object;
}

/** The `{names}` of a path template, `+` kept (`/assets/{file+}`). */
export function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * JSON Schemas of zod schemas, with each schema that has an `id` lifted into `components.schemas`
 * and referred to from there.
 */
class Components {
  private readonly lifted: Record<string, JsonSchema> = {};

  of(schema: z.ZodMiniType): JsonSchema {
    // `input`: what a caller sends (a query's whole number is `integer`, read from its text).
    const {
      $schema: _,
      $defs,
      ...converted
    } = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
    for (const [id, definition] of Object.entries($defs ?? {})) this.lifted[id] = relinked(definition);
    return relinked(converted);
  }

  all(): Record<string, JsonSchema> {
    return Object.fromEntries(Object.entries(this.lifted).sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** `#/$defs/Job` as `#/components/schemas/Job`, at any depth. */
function relinked<T>(value: T): T {
  if (Array.isArray(value)) return value.map(relinked) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith('#/$defs/')
        ? `#/components/schemas/${item.slice('#/$defs/'.length)}`
        : relinked(item);
  }
  return out as T;
}
