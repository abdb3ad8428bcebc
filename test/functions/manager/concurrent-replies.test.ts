import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import {
  concurrentDeliveryArbitrary,
  type RunOutcome,
  runConcurrently,
} from '../../support/concurrent-replies.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { shapeArbitrary } from '../../support/random-workflows.js';
import { reportFigures, scaled } from '../../support/soak.js';

const SQLITE_RUNS = scaled(150, 2000, 'CONCURRENCY_RUNS');
const DYNAMODB_RUNS = scaled(40, 400, 'CONCURRENCY_RUNS');
/** Runs with every fan-out created one child per transition, on each store. */
const SLICED_RUNS = scaled(20, 200, 'CONCURRENCY_RUNS');
/** Manager instances on the one DynamoDB table, as Lambda runs several replies functions at once. */
const DYNAMODB_MANAGERS = 3;

const figures = {
  sqlite: { jobs: 0, replies: 0, duplicates: 0, lostRaces: 0 },
  dynamodb: { jobs: 0, replies: 0, duplicates: 0, lostRaces: 0, managers: DYNAMODB_MANAGERS },
};

/** Same result and step outputs as the serial run; every transition exactly once; every request sent once. */
function expectSameAsSerial(reference: RunOutcome, concurrent: RunOutcome): void {
  expect(reference.job.status).toBe('completed');
  expect(concurrent.job.status).toBe('completed');
  expect(concurrent.job.result).toEqual(reference.job.result);
  expect(concurrent.job.steps.map((step) => [step.name, step.status, step.attempts, step.output])).toEqual(
    reference.job.steps.map((step) => [step.name, step.status, step.attempts, step.output]),
  );
  // (Keys name job ids, which differ between runs on a shared table: compare how many.)
  expect(concurrent.transitions.size).toBe(reference.transitions.size);
  for (const [transition, count] of concurrent.transitions) expect(count, transition).toBe(1);
  expect(concurrent.dispatches.size).toBe(reference.dispatches.size);
  for (const [request, count] of concurrent.dispatches) expect(count, `sent ${request}`).toBe(1);
}

describe('Concurrent replies with duplicates, in any order: the same as one at a time', () => {
  afterAll(() => reportFigures('concurrent replies', figures));

  it('SQLite (one serve owns a database): concurrent handleReplies calls on one manager', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, concurrentDeliveryArbitrary, async (shape, delivery) => {
        const reference = await runConcurrently(shape, null);
        const store = SqliteStore.open(':memory:');
        try {
          const concurrent = await runConcurrently(shape, delivery, [store]);
          expectSameAsSerial(reference, concurrent);
          figures.sqlite.jobs++;
          figures.sqlite.replies += concurrent.repliesDelivered;
          figures.sqlite.duplicates += concurrent.duplicatesDelivered;
          figures.sqlite.lostRaces += concurrent.conflicts;
        } finally {
          await store.close();
        }
      }),
      { numRuns: SQLITE_RUNS },
    );
  }, 300_000);

  it('SQLite, with fan-outs created one child per transition', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, concurrentDeliveryArbitrary, async (shape, delivery) => {
        const reference = await runConcurrently(shape, null);
        const store = SqliteStore.open(':memory:');
        try {
          const names = { workflow: 'random', jobId: '00000000-0000-4000-8000-000000000001' };
          expectSameAsSerial(reference, await runConcurrently(shape, delivery, [store], names, 1));
        } finally {
          await store.close();
        }
      }),
      { numRuns: SLICED_RUNS },
    );
  }, 300_000);

  describe('DynamoDB Local', () => {
    let dynamo: DynamoDbLocal | undefined;
    afterAll(async () => {
      await dynamo?.stop();
    });

    it(`${DYNAMODB_MANAGERS} Manager instances on one table, each with its own store and client`, async () => {
      dynamo = await startDynamoDbLocal();
      const tableName = uniqueTableName('concurrent-replies');
      await createSwitchyardTable(dynamo.client, tableName);
      const local = dynamo;
      let run = 0;
      await fc.assert(
        fc.asyncProperty(shapeArbitrary, concurrentDeliveryArbitrary, async (shape, delivery) => {
          run++;
          const reference = await runConcurrently(shape, null);
          // One table for every run: each run its own workflow name and job id.
          const stores = Array.from(
            { length: DYNAMODB_MANAGERS },
            () => new DynamoDbStore({ client: local.newClient(), tableName }),
          );
          const concurrent = await runConcurrently(shape, delivery, stores, {
            workflow: `random-${run}`,
            jobId: crypto.randomUUID(),
          });
          expectSameAsSerial(reference, concurrent);
          figures.dynamodb.jobs++;
          figures.dynamodb.replies += concurrent.repliesDelivered;
          figures.dynamodb.duplicates += concurrent.duplicatesDelivered;
          figures.dynamodb.lostRaces += concurrent.conflicts;
        }),
        { numRuns: DYNAMODB_RUNS },
      );
    }, 600_000);

    it(`${DYNAMODB_MANAGERS} Manager instances on one table, with fan-outs created one child per transition`, async () => {
      dynamo ??= await startDynamoDbLocal();
      const tableName = uniqueTableName('concurrent-sliced');
      await createSwitchyardTable(dynamo.client, tableName);
      const local = dynamo;
      let run = 0;
      await fc.assert(
        fc.asyncProperty(shapeArbitrary, concurrentDeliveryArbitrary, async (shape, delivery) => {
          run++;
          const reference = await runConcurrently(shape, null);
          const stores = Array.from(
            { length: DYNAMODB_MANAGERS },
            () => new DynamoDbStore({ client: local.newClient(), tableName }),
          );
          const names = { workflow: `sliced-${run}`, jobId: crypto.randomUUID() };
          expectSameAsSerial(reference, await runConcurrently(shape, delivery, stores, names, 1));
        }),
        { numRuns: SLICED_RUNS },
      );
    }, 600_000);
  });
});
