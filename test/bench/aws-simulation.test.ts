import { describe, expect, it } from 'vitest';
import { startSimulation } from '../../bench/aws-simulation.js';
import { DIAMOND } from '../../bench/workloads.js';

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
});
