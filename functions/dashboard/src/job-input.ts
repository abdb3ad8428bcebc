import type { JsonObject } from './api-types.js';

/** The start form's verdict on its text: the job input to send (empty text: `{}`), or why not. Pure. */
export function parseJobInput(text: string): { input: JsonObject } | { error: string } {
  const trimmed = text.trim();
  if (!trimmed) return { input: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (error) {
    return { error: `Not JSON: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { error: 'The input must be a JSON object, such as {"items": [1, 2]}.' };
  }
  return { input: parsed as JsonObject };
}
