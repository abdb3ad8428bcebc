import type { JsonObject } from '../json.js';
import { jsonBytesWithin, surelyWithin } from '../json-size.js';

/** Replies, and the requests sent to workers, may be this large by default (SQS's limit too). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * Why the request `step` would send is over `maxBytes`, naming the step and the limit; undefined
 * when it is within it. Counted without writing the JSON, and only up to the limit: a body of any
 * size (the merge of many large outputs) costs at most a walk over `maxBytes` of it.
 */
export function oversizedRequest(step: string, body: JsonObject, maxBytes: number): string | undefined {
  if (surelyWithin(body, maxBytes) || jsonBytesWithin(body, maxBytes) !== undefined) return undefined;
  return `step "${step}": the request is more than ${maxBytes} bytes of JSON, the most a request may have (the manager's maxReplyBytes): give the step only what its worker needs with an "input:" mapping`;
}
