import { describe, expect, it } from 'vitest';
import { unattended } from '../../../functions/dashboard/src/queue-health.js';

describe('Function: unattended', () => {
  it.each([
    [{ ready: 5, consumers: 0 }, true],
    [{ ready: 0, consumers: 0 }, false],
    [{ ready: 5, consumers: 2 }, false],
    [{ ready: 5, consumers: 'unknown' as const }, false],
    [{}, false],
  ])('%j: %s', (queue, expected) => {
    expect(unattended(queue)).toBe(expected);
  });
});
