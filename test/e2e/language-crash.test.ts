import { describe, expect, it } from 'vitest';
import { runLanguageCrashWorkload } from '../support/language-crash.js';
import { reportFigures, SOAK, scaled } from '../support/soak.js';

const KILLS = scaled(2, 15, 'LANGUAGE_KILLS');

/**
 * `switchyard serve` as a child process on RabbitMQ and SQLite, killed with SIGKILL while jobs sleep
 * (`sleep:`), loop (`repeat:`), and wait for a signal (sent before, while and after the step
 * waits), for a callback on their attempt's token, or for the signal their worker suspended them
 * for, and restarted on the same database: every job ends completed with its planned result, none
 * is lost, nothing is doubled (test/support/language-crash.ts says what counts as doubled). The
 * short version; test/soak/language-crash.test.ts runs the long one.
 */
describe('Sleeping, looping and callback-waiting jobs through SIGKILLs of serve', {
  timeout: SOAK ? 1_800_000 : 300_000,
}, () => {
  it(`ends every job as planned after ${KILLS} kills: 0 lost, 0 doubled`, async () => {
    const figures = await runLanguageCrashWorkload({
      kills: KILLS,
      jobsPerKind: scaled(12, 60, 'LANGUAGE_JOBS_PER_KIND'),
    });
    reportFigures(
      SOAK ? 'sleep/loop/callback crashes (soak)' : 'sleep/loop/callback crashes (short)',
      figures,
    );
    expect(figures.lost).toBe(0);
    expect(figures.doubled).toBe(0);
    // The early path was taken: some signals came before their step waited and were kept.
    expect(figures.signalsKept).toBeGreaterThan(0);
    expect(figures.unfinishedAtKill.some((count) => count > 0)).toBe(true);
  });
});
