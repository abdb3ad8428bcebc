import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.js';

/** JSON values as they travel between the manager and workers. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "object", "list", "string", "number", "boolean", "null" or "missing": for error messages. */
export function describeJsonType(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}

/**
 * Sets an own, enumerable property even when `key` is `__proto__`: plain assignment would
 * change the object's prototype instead (prototype pollution).
 */
export function setOwn(target: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export function hasOwn(target: object, key: string): boolean {
  return Object.hasOwn(target, key);
}

/** A shallow copy of `source` without `omit`; safe for every key. */
export function copyWithout(source: JsonObject, omit?: string): JsonObject {
  const copy: JsonObject = {};
  for (const key of Object.keys(source)) {
    if (key !== omit) setOwn(copy, key, source[key] as Json);
  }
  return copy;
}

/**
 * Merge rule of workflows.md: for each key, the value from the first output, in the order given,
 * that has the key. Outputs that are not objects contribute nothing.
 */
export function mergeFirstWins(outputs: readonly (Json | undefined)[]): JsonObject {
  const merged: JsonObject = {};
  for (const output of outputs) {
    if (!isJsonObject(output)) continue;
    for (const key of Object.keys(output)) {
      if (!hasOwn(merged, key)) setOwn(merged, key, output[key] as Json);
    }
  }
  return merged;
}

export type ParsedBody = { ok: true; value: JsonObject } | { ok: false; error: string };

/**
 * Reading a reply, input or signal body: a JSON object; an empty body or `null` means `{}`; an
 * array, a scalar, text that is not JSON, or a body nested deeper than `MAX_JSON_DEPTH` is an
 * error that says so.
 */
export function parseJsonObjectBody(text: string): ParsedBody {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: {} };
  if (nestedDeeperThan(trimmed, MAX_JSON_DEPTH)) {
    return {
      ok: false,
      error: `body is nested more than ${MAX_JSON_DEPTH} levels deep (objects and lists)`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    return { ok: false, error: `body is not JSON (${(error as Error).message})` };
  }
  if (value === null) return { ok: true, value: {} };
  if (!isJsonObject(value)) {
    return { ok: false, error: `body must be a JSON object, got ${describeJsonType(value)}` };
  }
  return { ok: true, value };
}

/** Whether two JSON values are the same value: objects compare by their keys in any order, lists in order. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return (
      Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index] as Json))
    );
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => hasOwn(b, key) && jsonEqual(a[key] as Json, b[key] as Json))
  );
}
