import { afterAll, describe, expect, it } from 'vitest';
import { definitionInNamespace, type Store } from '../../../engine/index.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { type ApiCall, callApi, errorOf, worldApi } from '../../support/api-calls.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../support/dynamodb-local.js';
import { SimulatedWorld, workflowsFrom } from '../../support/simulated-world.js';

const ID = '3f2a9c1e-7b44-4c1d-9e8f-0a1b2c3d4e5f';
const FIRST = '{"a":1,"b":{"x":[1,{"p":true,"q":null}],"y":"text"}}';

let dynamo: DynamoDbLocal | undefined;
afterAll(async () => {
  await dynamo?.stop();
});

/**
 * api.md: starting a job under an id already taken, with the same workflow and input, is the
 * idempotent 200. "The same input" is the same JSON value: key order does not count, list order does.
 */
describe.each<[string, () => Promise<Store>]>([
  ['the memory store', async () => new MemoryStore()],
  ['the SQLite store (serve)', async () => SqliteStore.open(':memory:')],
  [
    'the DynamoDB store (deployed), on DynamoDB Local',
    async () => {
      dynamo ??= await startDynamoDbLocal();
      const tableName = uniqueTableName('idempotent-start');
      await createSwitchyardTable(dynamo.client, tableName);
      return new DynamoDbStore({ client: dynamo.client, tableName });
    },
  ],
])('Starting a job again under its id, on %s', (_, open) => {
  it('with the same input in another key order is 200; a different input is 409 and changes nothing', async () => {
    const world = new SimulatedWorld(await open());
    await world.register('workflows:\n  - name: one\n    steps:\n      - name: a\n');
    const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
    const start = (body: string) =>
      callApi(deps, { method: 'POST', path: '/api/workflow/one', query: { id: ID }, body });

    const first = await start(FIRST);
    expect([first.status, first.body]).toEqual([201, JSON.stringify({ id: ID })]);

    const reordered = await start('{"b":{"y":"text","x":[1,{"q":null,"p":true}]},"a":1}');
    expect([reordered.status, reordered.body]).toEqual([200, JSON.stringify({ id: ID })]);

    for (const different of [
      '{"a":1,"b":{"x":[{"p":true,"q":null},1],"y":"text"}}',
      '{"a":1,"b":{"x":[1,{"p":true,"q":null}],"y":"text","z":0}}',
      '{"a":1,"b":{"x":[1,{"p":true}],"y":"text"}}',
      '{"a":"1","b":{"x":[1,{"p":true,"q":null}],"y":"text"}}',
    ]) {
      const refused = await start(different);
      expect([refused.status, errorOf(refused).code], different).toEqual([409, 'conflict']);
    }

    const job = await world.store.getJob(ID);
    expect(JSON.stringify(job?.input)).toBe(FIRST);
    await world.manager.drain();
    expect(world.take()).toHaveLength(1);
  }, 60_000);

  it("with another namespace's job id is 404, as if absent (not 409, which would tell the id is taken), and creates nothing", async () => {
    // Prepare: team-b's job holds the id; team-a and default each have a workflow of the same name
    const world = new SimulatedWorld(await open());
    for (const workflow of workflowsFrom('workflows:\n  - name: one\n    steps:\n      - name: a\n')) {
      await world.manager.registerWorkflow(workflow);
      await world.manager.registerWorkflow(definitionInNamespace(workflow, 'team-a'));
      await world.manager.registerWorkflow(definitionInNamespace(workflow, 'team-b'));
    }
    const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
    const teamB = await callApi(deps, {
      method: 'POST',
      path: '/api/ns/team-b/workflow/one',
      query: { id: ID },
      body: FIRST,
    });
    expect(teamB.status).toBe(201);
    const held = await world.store.getJob(ID);
    // team-b's first request leaves the outbox now, not during the attempts below.
    await world.manager.drain();
    world.take();
    // Act: the same id and input from team-a and from default, as ?id= and as the body's id
    const attempts: Omit<ApiCall, 'method'>[] = [
      { path: '/api/ns/team-a/workflow/one', query: { id: ID }, body: FIRST },
      { path: '/api/ns/team-a/workflow/one', query: { id: ID.toUpperCase() }, body: '{}' },
      { path: '/api/workflow/one', query: { id: ID }, body: FIRST },
      { path: '/api/workflow/one', query: {}, body: JSON.stringify({ id: ID }) },
    ];
    for (const attempt of attempts) {
      const refused = await callApi(deps, { method: 'POST', ...attempt });
      // Assess
      expect([refused.status, errorOf(refused).code], JSON.stringify(attempt)).toEqual([404, 'not_found']);
      expect(refused.body).not.toContain('team-b');
    }
    expect(await world.store.getJob(ID)).toEqual(held);
    for (const namespace of ['team-a', 'default']) {
      expect((await world.store.queryJobs({ namespace, limit: 10 })).jobs, namespace).toEqual([]);
    }
    expect(world.take()).toEqual([]);
  }, 60_000);
});
