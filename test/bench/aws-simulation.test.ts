import { describe, expect, it } from 'vitest';
import { AWS_CALL_MS } from '../../bench/aws-call-latency.js';
import { startSimulation } from '../../bench/aws-simulation.js';
import { cpuStretch } from '../../bench/lambda-invocations.js';
import { DIAMOND } from '../../bench/workloads.js';
import { FUNCTION_SIZES } from '../../infra/function-sizes.js';

describe('The simulated deployment', () => {
  it('runs each concurrent job start in an API environment of its own, and reuses an idle one', async () => {
    // Arrange
    const simulation = await startSimulation();
    try {
      // Act
      await Promise.all(Array.from({ length: 5 }, () => simulation.startJob(DIAMOND, {})));
      const afterBurst = simulation.apiEnvironments();
      await simulation.startJob(DIAMOND, {});

      // Assess: as on Lambda, each start writes its sent log and sends its request itself, not
      // batched with another invocation's, and the sixth start finds an idle environment.
      expect(afterBurst).toBe(5);
      expect(simulation.apiEnvironments()).toBe(5);
      expect(simulation.invocations.api.count).toBe(6);
      expect(simulation.counts.api.dynamoCalls.BatchWriteItem).toBe(6);
      expect(simulation.counts.api.sqsCalls.SendMessageBatch).toBe(6);
    } finally {
      await simulation.stop();
    }
  }, 120_000);

  it("times a start as Lambda bills it: its waits on AWS's calls as they are, its own work at its memory's CPU", async () => {
    // Arrange
    const simulation = await startSimulation();
    try {
      await simulation.startJob(DIAMOND, {});
      const before = { ...simulation.invocations.api };
      simulation.setTiming(true);

      // Act
      await simulation.startJob(DIAMOND, {});
      simulation.setTiming(false);

      // Assess: the start's calls (its sent log and its send among them) each last at least AWS_CALL_MS.
      const waited = (simulation.invocations.api.awsWaitMs ?? 0) - (before.awsWaitMs ?? 0);
      const own = (simulation.invocations.api.ownMs ?? 0) - (before.ownMs ?? 0);
      expect(waited).toBeGreaterThanOrEqual(2 * AWS_CALL_MS);
      expect(own).toBeGreaterThan(0);
      expect(simulation.invocations.api.billedMs - before.billedMs).toBe(
        Math.max(1, Math.ceil(waited + own * cpuStretch(FUNCTION_SIZES.api.memorySize))),
      );
    } finally {
      await simulation.stop();
    }
  }, 120_000);
});
