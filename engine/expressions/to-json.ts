import type { Json, JsonObject } from '../json.js';
import { setOwn } from '../json.js';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import { jsonBytesWithin } from '../json-size.js';

/** The value an `input:` expression gave is larger, as JSON, than a request may be. */
export class OutputTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`gives more than ${limit} bytes of JSON, the most a request may have`);
  }
}

/**
 * How many times its count from below a value's JSON may take at most: a number counted as 1 byte
 * takes up to 24 (`-1.2345678901234567e-308`), a character up to 6 (a control character's escape).
 */
const MOST_PER_LEAST = 24;

/**
 * Copies what an `input:` expression gave into fresh JSON, stopping at `maxBytes` of JSON text. The
 * value may share parts (`input.l.map(e, input.l)` is N references to one list) that the copy writes
 * out each time, so the copy, not the evaluation, is what can grow: it counts its bytes as it goes,
 * from below (each character and number at least one), and stops once that passes the limit. A copy
 * that could still be over the limit counted from above is then measured exactly.
 */
export function toJson(value: unknown, maxBytes: number): JsonObject {
  const size: Copy = { least: 0, maxBytes, path: [] };
  const copy = copyValue(value, size) as JsonObject;
  if (size.least * MOST_PER_LEAST > maxBytes && jsonBytesWithin(copy, maxBytes) === undefined)
    throw new OutputTooLarge(maxBytes);
  return copy;
}

/** A copy under way: its JSON size counted from below, and where it is. */
interface Copy {
  least: number;
  readonly maxBytes: number;
  /** Keys and indexes down to the value being copied, for error messages. */
  readonly path: (string | number)[];
}

function add(size: Copy, least: number): void {
  size.least += least;
  if (size.least > size.maxBytes) throw new OutputTooLarge(size.maxBytes);
}

/** A list or map one level deeper: a request is a body, nested at most as deep as any (json-depth.ts). */
function enter(size: Copy): void {
  if (size.path.length >= MAX_JSON_DEPTH)
    throw new Error(
      `gave JSON nested more than ${MAX_JSON_DEPTH} levels deep (objects and lists)${at(size)}`,
    );
}

function at(size: Copy): string {
  let path = '';
  for (const part of size.path) path += typeof part === 'number' ? `[${part}]` : path ? `.${part}` : part;
  return path ? ` at ${path}` : '';
}

function copyValue(value: unknown, size: Copy): Json {
  switch (typeof value) {
    case 'string':
      add(size, 2 + value.length);
      return value;
    case 'boolean':
      add(size, 4);
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`gave ${value}${at(size)}, which JSON cannot hold`);
      add(size, 1);
      return value;
    case 'bigint':
      add(size, 1);
      return safeInteger(value, size);
    case 'object': {
      if (value === null) {
        add(size, 4);
        return null;
      }
      if (Array.isArray(value)) {
        enter(size);
        add(size, 1 + value.length);
        const out: Json[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          size.path.push(i);
          out[i] = copyValue(value[i], size);
          size.path.pop();
        }
        return out;
      }
      if (value instanceof Map) {
        enter(size);
        add(size, 1 + 2 * value.size);
        const out: JsonObject = {};
        for (const [key, item] of value) {
          if (typeof key !== 'string')
            throw new Error(`gave a map key ${String(key)}${at(size)}; keys must be strings`);
          copyEntry(out, key, item, size);
        }
        return out;
      }
      if (isPlainObject(value)) {
        enter(size);
        const keys = Object.keys(value);
        add(size, 1 + 2 * keys.length);
        const out: JsonObject = {};
        for (const key of keys) copyEntry(out, key, value[key], size);
        return out;
      }
      // cel-js's uint: a class holding a bigint.
      const primitive = (value as { valueOf(): unknown }).valueOf();
      if (typeof primitive === 'bigint' && (value as object).constructor?.name === 'UnsignedInt') {
        add(size, 1);
        return safeInteger(primitive, size);
      }
      throw new Error(`gave ${describe(value)}${at(size)}, which is not JSON`);
    }
    default:
      throw new Error(`gave ${describe(value)}${at(size)}, which is not JSON`);
  }
}

function copyEntry(out: JsonObject, key: string, item: unknown, size: Copy): void {
  add(size, 2 + key.length);
  size.path.push(key);
  setOwn(out, key, copyValue(item, size));
  size.path.pop();
}

function safeInteger(value: bigint, size: Copy): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new Error(`gave the integer ${value}${at(size)}, beyond what a JSON number holds exactly (±2^53)`);
  }
  return Number(value);
}

export function isMap(value: unknown): value is Map<unknown, unknown> | Record<string, unknown> {
  return value instanceof Map || isPlainObject(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** What a CEL value is, for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a bool';
  if (Array.isArray(value)) return 'a list';
  if (isMap(value)) return 'a map';
  if (value instanceof Uint8Array) return 'bytes';
  if (value instanceof Date) return 'a timestamp';
  return `a ${(value as object).constructor?.name ?? 'value'}`;
}
