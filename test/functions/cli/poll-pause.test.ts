import { describe, expect, it } from 'vitest';
import { pollPauseMs } from '../../../functions/cli/commands/jobs.js';

describe('watch against an API that answers at once (deployed: ?wait capped at 0 s)', () => {
  it('pauses 1 s after the first unchanged answer, doubling up to 10 s while nothing changes', () => {
    expect([1, 2, 3, 4, 5, 9].map(pollPauseMs)).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  });
});
