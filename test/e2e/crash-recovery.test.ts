import { describe, expect, it } from 'vitest';
import { runCrashWorkload } from '../support/crash-workload.js';
import { reportFigures, SOAK, scaled } from '../support/soak.js';

const KILLS = scaled(5, 25, 'CRASH_KILLS');

/**
 * `switchyard serve` as a child process, killed with SIGKILL at random moments while diamonds,
 * fan-outs, nested fan-outs, retried steps and timed-out steps run, and restarted on the same
 * database: every job must end with the right result, and no step may get an attempt that no error
 * or timeout called for. The short version; test/soak/crash-recovery.test.ts runs the long one.
 */
describe('Crash recovery: serve killed with SIGKILL mid-workload', {
  timeout: SOAK ? 900_000 : 240_000,
}, () => {
  it(`finishes every job with the right result after ${KILLS} kills`, async () => {
    const figures = await runCrashWorkload({
      kills: KILLS,
      diamonds: scaled(120, 400, 'CRASH_DIAMONDS'),
      fanOuts: scaled(8, 40, 'CRASH_FAN_OUTS'),
      nestedFanOuts: scaled(6, 30),
      retried: scaled(10, 40),
      timedOut: scaled(6, 30),
    });
    reportFigures(SOAK ? 'crash recovery (soak)' : 'crash recovery (short)', figures);
    expect(figures.lost).toBe(0);
    expect(figures.runningAtKill.some((count) => count > 0)).toBe(true);
  });
});
