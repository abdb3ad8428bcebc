import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../engine/json.js';
import { jsonBytesWithin, jsonStringBytes, surelyWithin } from '../../engine/json-size.js';

/** JSON values whose strings take every kind of UTF-16 unit: controls, quotes, astral pairs, lone surrogates. */
const anyJson = fc.jsonValue({
  stringUnit: fc.oneof(
    fc.constantFrom('"', '\\', '\n', '\u0001', '\ud800', '\udfff'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
});

describe('Function: surelyWithin', () => {
  it('never says a value fits when its JSON text is larger than the limit', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat({ max: 2000 }), (value, limit) => {
        const bytes = Buffer.byteLength(JSON.stringify(value));
        if (surelyWithin(value as Json, limit)) expect(bytes).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 2000 },
    );
  });

  it('says so for a small body under a large limit, and not for one over it', () => {
    expect(surelyWithin({ orderId: 'o-1', total: 12.5, lines: [1, 2, 3] }, 1024 * 1024)).toBe(true);
    expect(surelyWithin({ blob: 'x'.repeat(200_000) }, 1024 * 1024)).toBe(false);
  });
});

describe('Function: jsonBytesWithin', () => {
  it('counts the bytes of JSON.stringify exactly, and gives up exactly when they pass the limit', () => {
    fc.assert(
      fc.property(anyJson, fc.nat({ max: 3000 }), (value, limit) => {
        const bytes = Buffer.byteLength(JSON.stringify(value));
        expect(jsonBytesWithin(value as Json, Number.MAX_SAFE_INTEGER)).toBe(bytes);
        expect(jsonBytesWithin(value as Json, limit)).toBe(bytes <= limit ? bytes : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it('measures a value that shares one list a million times over without walking all of it', () => {
    const row = Array.from({ length: 1_000 }, (_, i) => i);
    const square = Array.from({ length: 1_000 }, () => row);
    expect(
      jsonBytesWithin({ rows: Array.from({ length: 1_000 }, () => square) }, 1024 * 1024),
    ).toBeUndefined();
  });
});

describe('Function: jsonStringBytes', () => {
  it.each([
    ['', 2],
    ['abc', 5],
    ['é', 4],
    ['€', 5],
    ['😀', 6],
    ['"\\', 6],
    ['\n\t', 6],
    ['\u0001', 8],
    ['\ud800', 8],
  ])('counts %j as %i bytes, as JSON.stringify writes it', (text, bytes) => {
    expect(jsonStringBytes(text)).toBe(bytes);
    expect(Buffer.byteLength(JSON.stringify(text))).toBe(bytes);
  });
});
