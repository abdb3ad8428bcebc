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

/** The UTF-8 bytes JSON.stringify writes for `text`: its quotes, escapes and multi-byte characters. */
export function jsonStringBytes(text: string): number {
  let bytes = 2 + text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20) bytes += ESCAPED_CONTROLS.has(unit) ? 1 : 5;
    else if (unit === 0x22 || unit === 0x5c) bytes += 1;
    else if (unit < 0x80) continue;
    else if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 2; // the pair is 4 bytes: 2 units, 2 more
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff)
      bytes += 5; // a lone surrogate is written \udxxx
    else bytes += 2;
  }
  return bytes;
}

/** \b \t \n \f \r: the control characters JSON writes in two bytes rather than six. */
const ESCAPED_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The UTF-8 bytes of `JSON.stringify(value)`, counted without writing it, or undefined as soon as
 * they pass `limit`: a value of any size, shared parts counted each time they appear, costs at most
 * a walk over `limit` bytes' worth of it.
 */
export function jsonBytesWithin(value: Json, limit: number): number | undefined {
  let bytes = 0;
  const stack: Json[] = [value];
  while (stack.length) {
    const item = stack.pop() as Json;
    if (typeof item === 'string') bytes += stringBytesWithin(item, limit - bytes);
    else if (typeof item === 'number') bytes += Number.isFinite(item) ? String(item).length : 4;
    else if (item === null || item === true) bytes += 4;
    else if (item === false) bytes += 5;
    else if (Array.isArray(item)) {
      bytes += 2 + Math.max(0, item.length - 1);
      if (bytes > limit) return undefined;
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i] as Json);
    } else {
      const keys = Object.keys(item);
      bytes += 2 + Math.max(0, keys.length - 1) + keys.length;
      for (const key of keys) {
        if (bytes > limit) return undefined;
        bytes += stringBytesWithin(key, limit - bytes);
        stack.push(item[key] as Json);
      }
    }
    if (bytes > limit) return undefined;
  }
  return bytes;
}

/** A string's JSON bytes, or a count already past `room` without reading a string that cannot fit. */
function stringBytesWithin(text: string, room: number): number {
  return 2 + text.length > room ? 2 + text.length : jsonStringBytes(text);
}
