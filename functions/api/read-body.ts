import { type JsonObject, parseJsonObjectBody } from '../../engine/index.js';
import { ApiError } from './http.js';

/**
 * A request body as a JSON object, whatever the content type says (as the original did: `curl -d`
 * sends a form type). An empty body is `{}`.
 */
export function readJsonObject(body: string, what: string): JsonObject {
  const parsed = parseJsonObjectBody(body);
  if (!parsed.ok) throw new ApiError('bad_request', `${what}: ${parsed.error}`);
  return parsed.value;
}
