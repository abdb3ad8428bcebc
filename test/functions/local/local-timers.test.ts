import { describe, expect, it, vi } from 'vitest';
import type { Timer } from '../../../engine/index.js';
import { LocalTimers } from '../../../functions/local/local-timers.js';

const timer = (at: number, step = 's1'): Timer => ({ jobId: 'job', step, kind: 'attempt', attempt: 1, at });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('LocalTimers', () => {
  it('fires a due timer with the others that came due together', async () => {
    const fired: Timer[][] = [];
    const timers = new LocalTimers(
      async (due) => void fired.push(due),
      () => 1_000,
    );
    await timers.arm([timer(1_000, 'a'), timer(900, 'b')]);
    await vi.waitFor(() => expect(fired).toHaveLength(1));
    expect(fired).toEqual([[timer(1_000, 'a'), timer(900, 'b')]]);
    expect(timers.armed).toBe(0);
  });

  it('never fires a timer before its time by the clock it was given, even when setTimeout wakes early', async () => {
    // Node's timers run on a monotonic millisecond clock, Date.now on the wall clock: a timer can
    // wake a millisecond before `at` by Date.now, and the engine would then ignore it as stale.
    let now = 1_000;
    const fired: number[] = [];
    const timers = new LocalTimers(
      async () => void fired.push(now),
      () => now,
    );
    await timers.arm([timer(1_010)]);
    now = 1_009; // setTimeout wakes after 10 ms of real time, but by this clock 1 ms is still to go
    await sleep(30);
    expect(fired).toEqual([]);
    expect(timers.armed).toBe(1);
    now = 1_010;
    await vi.waitFor(() => expect(fired).toEqual([1_010]));
    expect(timers.armed).toBe(0);
  });

  it('does not fire a disarmed timer, nor anything after stop', async () => {
    const fired: Timer[][] = [];
    const timers = new LocalTimers(
      async (due) => void fired.push(due),
      () => 10,
    );
    await timers.arm([timer(5, 'a'), timer(5, 'b')]);
    await timers.disarm([{ jobId: 'job', step: 'a' }]);
    await vi.waitFor(() => expect(fired).toHaveLength(1));
    expect(fired).toEqual([[timer(5, 'b')]]);
    await timers.arm([timer(5, 'c')]);
    timers.stop();
    await sleep(30);
    expect(fired).toHaveLength(1);
  });

  it('tries a batch again a second later when firing it fails', async () => {
    let now = 0;
    const attempts: number[] = [];
    const errors: unknown[] = [];
    const timers = new LocalTimers(
      async () => {
        attempts.push(now);
        if (attempts.length === 1) throw new Error('database is locked');
      },
      () => now,
      (error) => errors.push(error),
    );
    await timers.arm([timer(0)]);
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(attempts).toEqual([0]);
    now = 1_000;
    await vi.waitFor(() => expect(attempts).toEqual([0, 1_000]), { timeout: 5_000 });
    timers.stop();
  });
});
