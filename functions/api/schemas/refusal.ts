import type { ResponseSpec } from '../router.js';
import { ErrorDocument } from './documents.js';

/** A refusal a route answers: the API's error body (`{"error": {"code", "message"}}`), and when. */
export function refusal(description: string): ResponseSpec {
  return { description, schema: ErrorDocument };
}
