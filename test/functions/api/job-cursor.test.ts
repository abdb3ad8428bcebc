import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../engine/index.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const FOREIGN_CURSORS = ['garbage', 'MTIz', 'eyJhIjoxfQ', '-1', 'x'.repeat(300)];

let dynamo: DynamoDbLocal | undefined;
afterAll(async () => {
  await dynamo?.stop();
});

/** `GET /api/jobs?cursor=…` with a cursor the store never gave out is malformed input: 400, as api.md says. */
describe.each<[string, () => Promise<Store>]>([
  ['the SQLite store (serve)', async () => SqliteStore.open(':memory:')],
  [
    'the DynamoDB store (deployed), on DynamoDB Local',
    async () => {
      dynamo ??= await startDynamoDbLocal();
      const tableName = uniqueTableName('job-cursor');
      await createSwitchyardTable(dynamo.client, tableName);
      return new DynamoDbStore({ client: dynamo.client, tableName });
    },
  ],
])('A job list cursor that is not one of ours, on %s', (_, open) => {
  it('is a 400 with a JSON error, not a 500', async () => {
    const world = new SimulatedWorld(await open());
    const deps = worldApi(world, { maxBodyBytes: 1024 });
    for (const cursor of FOREIGN_CURSORS) {
      const response = await callApi(deps, {
        method: 'GET',
        path: '/api/jobs',
        query: { cursor, status: 'all' },
      });
      expect(
        [response.status, errorOf(response).code],
        `cursor "${cursor.slice(0, 20)}": ${response.body}`,
      ).toEqual([400, 'bad_request']);
    }
  }, 60_000);
});
