import { describe, expect, it } from 'vitest';
import { runContractWorkload } from '../support/contract-workload.js';
import { reportFigures, SOAK, scaled } from '../support/soak.js';

/**
 * Workers that break the contract at volume (poisonous replies, requests NACKed forever, a full
 * queue) while serve is killed with SIGKILL and restarted: every good job completes with its
 * result, every poisoned or rejected one fails saying why, and no rejected request circulates
 * after its job ended. The short version; `npm run soak` runs 10,000 jobs (test/soak).
 */
describe('The worker contract at volume, with SIGKILLs of serve', {
  timeout: SOAK ? 3_600_000 : 300_000,
}, () => {
  it('completes every good job, fails every bad one with its reason, and stops rejected requests', async () => {
    const figures = await runContractWorkload({
      jobs: scaled(300, 10_000, 'CONTRACT_JOBS'),
      kills: scaled(2, 10, 'CONTRACT_KILLS'),
    });
    reportFigures(SOAK ? 'worker contract at volume (soak)' : 'worker contract at volume (short)', figures);
    expect(figures.wrong).toEqual([]);
    expect(figures.poisonedFailed).toBeGreaterThan(0);
    expect(figures.rejectedFailed).toBeGreaterThan(0);
    expect(figures.squeezedCompleted).toBeGreaterThan(0);
    expect(figures.lateDeliveries).toBe(0);
  });
});
