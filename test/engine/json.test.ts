import { describe, expect, it } from 'vitest';
import { copyWithout, mergeFirstWins, parseJsonObjectBody } from '../../engine/index.js';

describe('JSON rules', () => {
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
