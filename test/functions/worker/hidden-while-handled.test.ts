import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BACK_AFTER_DEADLINE_SECONDS,
  hiddenUntilDeadline,
  keepHiddenWhileHandled,
} from '../../../functions/worker/lambda/hidden-while-handled.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Function: hiddenUntilDeadline', () => {
  it("hides a message for the invocation's remaining seconds, rounded up, and a little after", () => {
    expect(hiddenUntilDeadline(100_500, 40_000)).toBe(61 + BACK_AFTER_DEADLINE_SECONDS);
    expect(hiddenUntilDeadline(40_000, 40_000)).toBe(BACK_AFTER_DEADLINE_SECONDS);
    expect(hiddenUntilDeadline(30_000, 40_000)).toBe(BACK_AFTER_DEADLINE_SECONDS);
  });

  it("never asks for more than SQS's 12 hours", () => {
    expect(hiddenUntilDeadline(24 * 3600 * 1000, 0)).toBe(12 * 3600);
  });
});

describe('Function: keepHiddenWhileHandled', () => {
  it('extends once the handler has run for the interval, tries again after a failure, then stops asking', async () => {
    // Prepare: a fake clock; the first extension fails.
    vi.useFakeTimers({ now: 1_000_000 });
    const asked: number[] = [];
    const errors: unknown[] = [];
    const hidden = keepHiddenWhileHandled({
      deadline: 1_000_000 + 300_000,
      everyMs: 60_000,
      changeVisibility: async (seconds) => {
        asked.push(seconds);
        if (asked.length === 1) throw new Error('throttled');
      },
      onError: (error) => errors.push(error),
    });

    // Act
    await vi.advanceTimersByTimeAsync(59_999);
    const beforeTheInterval = asked.length;
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(60_000);
    await vi.advanceTimersByTimeAsync(120_000);
    hidden.stop();

    // Assess
    expect(beforeTheInterval).toBe(0);
    expect(asked).toEqual([240 + BACK_AFTER_DEADLINE_SECONDS, 180 + BACK_AFTER_DEADLINE_SECONDS]);
    expect(errors).toEqual([new Error('throttled')]);
  });

  it("asks nothing once stopped, and extend() asks at once (the handler's heartbeat)", async () => {
    // Prepare
    vi.useFakeTimers({ now: 0 });
    const asked: number[] = [];
    const hidden = keepHiddenWhileHandled({
      deadline: 90_000,
      everyMs: 1_000,
      changeVisibility: async (seconds) => {
        asked.push(seconds);
      },
      onError: () => {},
    });

    // Act
    await vi.advanceTimersByTimeAsync(500);
    await hidden.extend();
    hidden.stop();
    await vi.advanceTimersByTimeAsync(10_000);

    // Assess
    expect(asked).toEqual([90 + BACK_AFTER_DEADLINE_SECONDS]);
  });
});
