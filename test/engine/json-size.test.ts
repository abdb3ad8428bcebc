import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../engine/json.js';
import { surelyWithin } from '../../engine/json-size.js';

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
