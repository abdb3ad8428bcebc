import { describe, expect, it } from 'vitest';
import { copyWithout, MAX_JSON_DEPTH, mergeFirstWins, parseJsonObjectBody } from '../../engine/index.js';

const nestedLists = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

describe('JSON rules', () => {
  describe('Function: parseJsonObjectBody, nesting depth', () => {
    const tooDeep = `body is nested more than ${MAX_JSON_DEPTH} levels deep (objects and lists)`;

    it('takes a body nested up to the limit, the body itself being the first level', () => {
      expect(MAX_JSON_DEPTH).toBe(64);
      expect(parseJsonObjectBody(nestedObjects(64))).toMatchObject({ ok: true });
      expect(parseJsonObjectBody(`{"list": ${nestedLists(63)}}`)).toMatchObject({ ok: true });
    });

    it('refuses a body one level deeper, saying why', () => {
      expect(parseJsonObjectBody(nestedObjects(65))).toEqual({ ok: false, error: tooDeep });
      expect(parseJsonObjectBody(`{"list": ${nestedLists(64)}}`)).toEqual({ ok: false, error: tooDeep });
      expect(parseJsonObjectBody(nestedLists(65))).toEqual({ ok: false, error: tooDeep });
    });

    it('refuses 100,000 levels (200 KB) without overflowing the stack', () => {
      expect(parseJsonObjectBody(nestedLists(100_000))).toEqual({ ok: false, error: tooDeep });
      expect(parseJsonObjectBody(nestedObjects(100_000))).toEqual({ ok: false, error: tooDeep });
      expect(parseJsonObjectBody(`{"a": ${nestedLists(1_000_000)}}`)).toEqual({ ok: false, error: tooDeep });
    });

    it('does not count brackets inside strings, escaped quotes included', () => {
      const text = JSON.stringify({ text: `${'['.repeat(500)}"\\"${'{'.repeat(500)}`, more: '\\' });
      expect(parseJsonObjectBody(text)).toMatchObject({ ok: true, value: JSON.parse(text) });
    });
  });

  describe('Function: mergeFirstWins', () => {
    it('takes each key from the first output, in order, that has it', () => {
      expect(
        mergeFirstWins([
          { a: 1, b: 1 },
          { b: 2, c: 2 },
          { c: 3, d: 3 },
        ]),
      ).toEqual({ a: 1, b: 1, c: 2, d: 3 });
    });

    it('lets outputs that are not objects contribute nothing', () => {
      expect(mergeFirstWins([null, [1, 2], 'text', 7, undefined, { a: 1 }])).toEqual({ a: 1 });
    });

    it('keeps a null value: the key is present', () => {
      expect(mergeFirstWins([{ a: null }, { a: 2 }])).toEqual({ a: null });
    });

    it('never pollutes prototypes, whatever the keys', () => {
      const hostile = JSON.parse(
        '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}',
      );
      const merged = mergeFirstWins([hostile, { prototype: 1 }]);
      expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
      expect(Object.keys(merged)).toEqual(['__proto__', 'constructor', 'prototype']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const copy = copyWithout(merged, 'prototype');
      expect(Object.keys(copy)).toEqual(['__proto__', 'constructor']);
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    });
  });

  describe('Function: parseJsonObjectBody', () => {
    it('reads an object', () => {
      expect(parseJsonObjectBody('{"a": [1, {"b": null}]}')).toEqual({
        ok: true,
        value: { a: [1, { b: null }] },
      });
    });

    it('reads an empty body and null as {}', () => {
      expect(parseJsonObjectBody('')).toEqual({ ok: true, value: {} });
      expect(parseJsonObjectBody('  \n')).toEqual({ ok: true, value: {} });
      expect(parseJsonObjectBody('null')).toEqual({ ok: true, value: {} });
    });

    it('refuses arrays, scalars and text that is not JSON, saying which', () => {
      expect(parseJsonObjectBody('[1]')).toEqual({
        ok: false,
        error: 'body must be a JSON object, got list',
      });
      expect(parseJsonObjectBody('"text"')).toEqual({
        ok: false,
        error: 'body must be a JSON object, got string',
      });
      expect(parseJsonObjectBody('42')).toEqual({
        ok: false,
        error: 'body must be a JSON object, got number',
      });
      const notJson = parseJsonObjectBody('{oops');
      expect(notJson.ok).toBe(false);
      expect(!notJson.ok && notJson.error).toMatch(/^body is not JSON/);
    });
  });
});
