import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryArbitrary, runJob, shapeArbitrary } from '../../support/random-workflows.js';

describe('Property: any valid DAG with tasks, replies in any order with duplicates and late replies', () => {
  it('completes every job and step exactly once, dispatches each step once, and the result does not depend on the order', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, deliveryArbitrary, async (shape, delivery) => {
        const reference = await runJob(shape, null);
        const shuffled = await runJob(shape, delivery);
        expect(reference.job.status).toBe('completed');
        expect(shuffled.job.status).toBe('completed');
        expect(shuffled.job.result).toEqual(reference.job.result);
        for (const [key, count] of shuffled.counts) expect(count, key).toBe(1);
        expect(shuffled.counts.size).toBe(reference.counts.size);
        for (const [correlationId, count] of shuffled.dispatches) expect(count, correlationId).toBe(1);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});

describe('Property: a fan-out created slice by slice', () => {
  it('completes every job and step exactly once, with the result of a fan-out created at once', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, deliveryArbitrary, async (shape, delivery) => {
        const reference = await runJob(shape, null);
        const sliced = await runJob(shape, delivery, undefined, 1);
        expect(sliced.job.status).toBe('completed');
        expect(sliced.job.result).toEqual(reference.job.result);
        for (const [key, count] of sliced.counts) expect(count, key).toBe(1);
        expect(sliced.counts.size).toBe(reference.counts.size);
        for (const [correlationId, count] of sliced.dispatches) expect(count, correlationId).toBe(1);
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
