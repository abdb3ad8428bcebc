import { describe, expect, it } from 'vitest';
import { runContractWorkload } from '../support/contract-workload.js';
import { reportFigures } from '../support/soak.js';

/** The long run of test/e2e/worker-contract-volume.test.ts: 10,000 jobs, 1% of each kind of bad worker, 10 kills. */
describe('Soak: the worker contract at volume, with SIGKILLs of serve', () => {
  it('completes 10,000 jobs but the bad ones, which fail saying why', async () => {
    const figures = await runContractWorkload({ jobs: 10_000, kills: 10 });
    reportFigures('worker contract at volume (soak)', figures);
    expect(figures.wrong).toEqual([]);
    expect(figures.lateDeliveries).toBe(0);
  });
});
