import { describe, expect, it } from 'vitest';
import { runCrashWorkload } from '../support/crash-workload.js';
import { reportFigures, SOAK, scaled } from '../support/soak.js';

const KILLS = scaled(5, 25, 'CRASH_KILLS');

/**
 * `switchyard serve` as a child process, killed with SIGKILL at random moments while diamonds,
 * fan-outs, nested fan-outs, retried steps, timed-out steps, workflow: calls, onFailure handlers and
 * continueOnError branches run, and restarted on the same database: every job must end with the
 * right result, no step may get an attempt that no error or timeout called for, no call may start
 * two jobs and every failing job has exactly one onFailure job. The short version; test/soak/crash-recovery.test.ts runs the long one.
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
      calls: scaled(20, 80, 'CRASH_CALLS'),
      handled: scaled(10, 40, 'CRASH_HANDLED'),
    });
    reportFigures(SOAK ? 'crash recovery (soak)' : 'crash recovery (short)', figures);
    expect(figures.lost).toBe(0);
    expect(figures.duplicateCalls).toBe(0);
    expect(figures.missingOrExtraOnFailure).toBe(0);
    expect(figures.runningAtKill.some((count) => count > 0)).toBe(true);
  });
});
