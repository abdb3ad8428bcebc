import type { Json } from './json.js';

/** The most UTF-8 bytes JSON.stringify can write for one UTF-16 unit of a string (`\u0000`). */
const WORST_BYTES_PER_UNIT = 6;

/**
 * Whether `value`, as JSON text, certainly takes no more than `limit` UTF-8 bytes: a bound counted
 * without writing the text (every string at its worst escaping, every number at its longest), so
 * the usual small body costs a walk and no allocation. False means only "maybe larger": measure it.
 */
export function surelyWithin(value: Json, limit: number): boolean {
  let budget = limit;
  const stack: Json[] = [value];
  while (stack.length) {
    const item = stack.pop() as Json;
    if (typeof item === 'string') budget -= 2 + item.length * WORST_BYTES_PER_UNIT;
    else if (typeof item === 'number') budget -= 24;
    else if (item === null || typeof item === 'boolean') budget -= 5;
    else if (Array.isArray(item)) {
      budget -= 2 + item.length;
      for (const element of item) stack.push(element);
    } else {
      const keys = Object.keys(item);
      budget -= 2 + keys.length * 4;
      for (const key of keys) {
        budget -= key.length * WORST_BYTES_PER_UNIT;
        stack.push(item[key] as Json);
      }
    }
    if (budget < 0) return false;
  }
  return true;
}
