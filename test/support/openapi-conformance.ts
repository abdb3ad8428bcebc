import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { routes } from '../../functions/api/api-handler.js';
import type { ApiResponse } from '../../functions/api/http.js';
import { openApiDocument } from '../../functions/api/openapi.js';

/*
 * The API description read as a client would read it, with a JSON Schema validator of its own (Ajv,
 * not the zod schemas it was made from): to check that what it documents is what the API does.
 */

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  allowEmptyValue?: boolean;
  schema: Record<string, unknown>;
}

export interface OperationObject {
  parameters?: ParameterObject[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema: Record<string, unknown> }> }
  >;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, unknown> };
}

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export const document = openApiDocument(routes) as unknown as OpenApiDocument;

/** Every operation of the document: `GET /api/jobs` and its operation object. */
export function operations(): { method: string; path: string; operation: OperationObject }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );
}

/** The documented operation a request to a concrete path is (templates matched segment by segment). */
export function operationOf(
  method: string,
  path: string,
): { template: string; operation: OperationObject } | undefined {
  const actual = path.split('/').filter(Boolean);
  const wanted = method.toUpperCase() === 'HEAD' ? 'get' : method.toLowerCase();
  for (const [template, item] of Object.entries(document.paths)) {
    const parts = template.split('/').filter(Boolean);
    const greedy = parts.at(-1)?.endsWith('+}');
    if (greedy ? actual.length < parts.length : actual.length !== parts.length) continue;
    if (parts.every((part, i) => part.startsWith('{') || part === actual[i]) && item[wanted]) {
      return { template, operation: item[wanted] };
    }
  }
  return undefined;
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const compiled = new Map<unknown, ValidateFunction>();

/** Whether `value` is valid against a schema of the document (its `$ref`s into the components resolve). */
export function validAgainst(
  schema: Record<string, unknown>,
  value: unknown,
): { valid: boolean; errors: string } {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile({ ...schema, components: document.components });
    compiled.set(schema, validate);
  }
  const valid = validate(value);
  return { valid, errors: valid ? '' : ajv.errorsText(validate.errors) };
}

/**
 * A query value as OpenAPI reads it for its schema: decimal digits for an `integer`, else the text.
 */
export function queryValue(schema: Record<string, unknown>, text: string): unknown {
  return schema.type === 'integer' && /^-?\d{1,15}$/.test(text) ? Number(text) : text;
}

/**
 * Why a response is not what the document says the operation answers (its status listed; a JSON
 * body valid against the schema listed for it), or undefined when it is.
 */
export function undocumented(method: string, path: string, response: ApiResponse): string | undefined {
  const found = operationOf(method, path);
  if (!found) return `no documented operation ${method} ${path}`;
  const listed = found.operation.responses[String(response.status)];
  if (!listed) return `${method} ${found.template} answered ${response.status}, which it does not list`;
  const schema = listed.content?.['application/json']?.schema;
  if (!schema || method.toUpperCase() === 'HEAD' || response.body === '') return undefined;
  const { valid, errors } = validAgainst(schema, JSON.parse(response.body));
  return valid
    ? undefined
    : `${method} ${found.template} ${response.status}: ${errors}: ${response.body.slice(0, 300)}`;
}
