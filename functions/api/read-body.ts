import { type JsonObject, parseJsonObjectBody } from '../../engine/index.js';
import { ApiError, type ApiRequest } from './http.js';

/**
 * A request body as a JSON object, whatever the content type says (as the original did: `curl -d`
 * sends a form type). An empty body is `{}`.
 */
export function readJsonObject(request: ApiRequest, what = 'the request body'): JsonObject {
  const parsed = parseJsonObjectBody(request.body);
  if (!parsed.ok) throw new ApiError('bad_request', `${what}: ${parsed.error}`);
  return parsed.value;
}

export function intParam(
  request: ApiRequest,
  name: string,
  options: { min?: number; max?: number } = {},
): number | undefined {
  const raw = request.query[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (
    !Number.isInteger(value) ||
    (options.min !== undefined && value < options.min) ||
    (options.max !== undefined && value > options.max)
  ) {
    const range =
      options.max !== undefined
        ? ` from ${options.min ?? 0} to ${options.max}`
        : options.min !== undefined
          ? ` of at least ${options.min}`
          : '';
    throw new ApiError(
      'bad_request',
      `query parameter "${name}" must be a whole number${range}, got "${raw}"`,
    );
  }
  return value;
}

export function flagParam(request: ApiRequest, name: string): boolean {
  const raw = request.query[name];
  return raw === '1' || raw === 'true' || raw === 'yes';
}
