import * as z from 'zod/mini';
import type { JsonObject } from '../../engine/index.js';
import { ApiError } from './http.js';
import { readJsonObject } from './read-body.js';
import type { ParameterSpec, ParameterSpecs, Route } from './router.js';

/*
 * Where every request is checked against its route's schemas, in one place, before its handler runs:
 * each path parameter (percent-decoded), each query parameter the route declares, and each field of a
 * JSON body. The same schemas are the route's `/openapi.json` (openapi.ts): a documented rule is the
 * enforced one. A value that breaks its rule is a 400 naming the parameter, its rule and the value.
 */

export interface CheckedParts {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  json: JsonObject;
}

export function checkRequest(
  route: Route,
  given: { params: Record<string, string>; query: Record<string, string>; body: string },
): CheckedParts {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given.params)) {
    const spec = route.params[name];
    if (!spec) throw new Error(`${route.method} ${route.path} has no schema for its {${name}}`);
    params[name] = checkValue(spec, value, `path parameter "${name}"`);
  }
  return { params, query: checkQuery(route.query, given.query), json: checkBody(route, given.body) };
}

/** The value `spec` makes of `value`, or a 400 naming it (`named`), its rule and the value. */
export function checkValue(spec: ParameterSpec, value: unknown, named: string): unknown {
  const checked = spec.schema.safeParse(value);
  if (checked.success) return checked.data;
  throw new ApiError('bad_request', `${named} must be ${ruleOf(spec.schema)}, got ${shown(value)}`);
}

/** A schema's rule in words: its description (schemas/parameters.ts). */
export function ruleOf(schema: z.ZodMiniType): string {
  const description = z.globalRegistry.get(schema)?.description;
  return typeof description === 'string' ? description : 'valid';
}

function checkQuery(specs: ParameterSpecs, given: Record<string, string>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = Object.hasOwn(given, name) ? given[name] : undefined;
    const absent = value === undefined || (value === '' && spec.emptyIsAbsent);
    if (absent) {
      if (spec.required) {
        throw new ApiError('bad_request', `query parameter "${name}" is required: ${spec.description}`);
      }
      continue;
    }
    query[name] = checkValue(spec, fromQueryText(spec, value), `query parameter "${name}"`);
  }
  return query;
}

/**
 * A query value is text; a parameter whose schema is a number reads it as decimal digits (`-12`), as
 * OpenAPI's `integer` is written in a query. Other text stays text, for its schema to refuse.
 */
function fromQueryText(spec: ParameterSpec, text: string): unknown {
  const numeric = spec.schema._zod.def.type === 'number';
  return numeric && /^-?\d{1,15}$/.test(text) ? Number(text) : text;
}

function checkBody(route: Route, text: string): JsonObject {
  const body = route.body;
  if (body?.kind !== 'json') return {};
  const json = readJsonObject(text, body.what);
  const fields = Object.keys(body.fields);
  for (const name of fields) {
    const spec = body.fields[name] as ParameterSpec;
    if (!Object.hasOwn(json, name)) {
      if (spec.required)
        throw new ApiError('bad_request', `${body.what}: "${name}" is required: ${spec.description}`);
      continue;
    }
    checkValue(spec, json[name], `${body.what}: "${name}"`);
  }
  if (!body.otherFields) {
    const unknown = Object.keys(json).find((name) => !Object.hasOwn(body.fields, name));
    if (unknown !== undefined) {
      throw new ApiError(
        'bad_request',
        `${body.what}: unknown field ${shown(unknown)}: it takes ${fields.join(', ')}`,
      );
    }
  }
  // The body as read, not a copy made by the schemas: `__proto__` and the like stay own keys.
  return json;
}

const MAX_SHOWN = 100;

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}
