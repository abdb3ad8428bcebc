import type { Json } from './api-types.js';

/** "3 keys", "1 item": what a collapsed object or array holds. */
export function jsonSummary(value: Json): string {
  if (Array.isArray(value)) return value.length === 1 ? '1 item' : `${value.length} items`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).length;
    return keys === 1 ? '1 key' : `${keys} keys`;
  }
  return '';
}

/** Roughly how many characters the value prints as. */
export function jsonSize(value: Json): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * Whether an object or array starts open: small values always, the first two levels of bigger ones
 * while they hold at most 25 entries, and nothing large below them.
 */
export function startsOpen(value: Json, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  const entries = Array.isArray(value) ? value.length : Object.keys(value).length;
  if (entries === 0) return true;
  if (jsonSize(value) <= 120) return true;
  if (depth === 0) return entries <= 50 || jsonSize(value) <= 4000;
  return depth < 2 && entries <= 25 && jsonSize(value) <= 2000;
}

/** Strings longer than this are cut, with a way to show the rest. */
export const LONG_STRING = 240;
/** Arrays and objects show this many entries before "show all". */
export const MANY_ENTRIES = 100;
