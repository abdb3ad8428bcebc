import { describe, expect, it } from 'vitest';
import { jsonSummary, startsOpen } from '../../../functions/dashboard/src/json-shape.js';

describe('Function: jsonSummary', () => {
  it('counts keys and items', () => {
    expect(jsonSummary({ a: 1, b: 2 })).toBe('2 keys');
    expect(jsonSummary({ a: 1 })).toBe('1 key');
    expect(jsonSummary([1])).toBe('1 item');
    expect(jsonSummary([])).toBe('0 items');
    expect(jsonSummary('text')).toBe('');
  });
});

describe('Function: startsOpen', () => {
  const big = (entries: number) =>
    Object.fromEntries(Array.from({ length: entries }, (_, i) => [`key${i}`, 'x'.repeat(40)]));

  it('opens small values at any depth', () => {
    expect(startsOpen({ a: [1, 2, 3] }, 5)).toBe(true);
  });

  it('opens the top of a big value but folds big values deep inside it', () => {
    expect(startsOpen(big(30), 0)).toBe(true);
    expect(startsOpen(big(30), 1)).toBe(false);
    expect(startsOpen(big(10), 1)).toBe(true);
    expect(startsOpen(big(10), 2)).toBe(false);
  });

  it('folds a huge top-level value', () => {
    expect(startsOpen(big(500), 0)).toBe(false);
  });
});
