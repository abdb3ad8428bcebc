import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: one
    steps:
      - name: a
  - name: other
    steps:
      - name: b
`;

const ID = '0b7e7d1c-5a43-4d0e-9d0f-1f5d2a3b4c5d';

async function world(newId?: () => string): Promise<SimulatedWorld> {
  const simulated = new SimulatedWorld(SqliteStore.open(':memory:'), undefined, newId);
  await simulated.register(WORKFLOWS);
  return simulated;
}

async function refusal(start: Promise<unknown>): Promise<string> {
  const error = await start.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ManagerError)) throw new Error(`expected a ManagerError, got ${String(error)}`);
  return error.code;
}

describe('Starting a job', () => {
  it('with an id already started: the same job for the same workflow and input, a conflict otherwise', async () => {
    const simulated = await world();
    const first = await simulated.manager.startJob({ workflow: 'one', input: { n: 1 }, id: ID });
    expect(first.created).toBe(true);
    const again = await simulated.manager.startJob({
      workflow: 'one',
      input: { n: 1 },
      id: ID.toUpperCase(),
    });
    expect(again).toMatchObject({ created: false, job: { id: ID, workflow: 'one' } });
    expect(await refusal(simulated.manager.startJob({ workflow: 'one', input: { n: 2 }, id: ID }))).toBe(
      'conflict',
    );
    expect(await refusal(simulated.manager.startJob({ workflow: 'other', input: { n: 1 }, id: ID }))).toBe(
      'conflict',
    );
    expect(simulated.take()).toHaveLength(1);
  });

  it('with an id already started, once its workflow is disabled: still that job; a new id is refused', async () => {
    const simulated = await world();
    await simulated.manager.startJob({ workflow: 'one', input: { n: 1 }, id: ID });
    await simulated.manager.store.setWorkflowEnabled('one', false);
    const again = await simulated.manager.startJob({ workflow: 'one', input: { n: 1 }, id: ID });
    expect(again).toMatchObject({ created: false, job: { id: ID } });
    expect(await refusal(simulated.manager.startJob({ workflow: 'one', input: { n: 2 }, id: ID }))).toBe(
      'conflict',
    );
    const other = '1c8f8e2d-6b54-4e1f-8e1a-2a6e3b4c5d6e';
    expect(await refusal(simulated.manager.startJob({ workflow: 'one', input: { n: 1 }, id: other }))).toBe(
      'conflict',
    );
    expect(await simulated.manager.store.getJob(other)).toBeUndefined();
    expect(simulated.take()).toHaveLength(1);
  });

  it('without an id: a new job under a new id, one request sent', async () => {
    const simulated = await world();
    const { created, job } = await simulated.manager.startJob({ workflow: 'one', input: {} });
    expect(created).toBe(true);
    expect((await simulated.job(job.id)).status).toBe('running');
    expect(simulated.take().map((request) => request.correlationId)).toEqual([`${job.id}:a`]);
  });

  it('without an id, should the id it makes name a stored job: answered as that id given, nothing overwritten', async () => {
    const simulated = await world(() => ID);
    await simulated.manager.startJob({ workflow: 'one', input: { n: 1 }, id: ID });
    simulated.take();
    const same = await simulated.manager.startJob({ workflow: 'one', input: { n: 1 } });
    expect(same).toMatchObject({ created: false, job: { id: ID } });
    expect(await refusal(simulated.manager.startJob({ workflow: 'other', input: {} }))).toBe('conflict');
    expect((await simulated.job(ID)).workflow).toBe('one');
    expect((await simulated.job(ID)).input).toEqual({ n: 1 });
    expect(simulated.take()).toEqual([]);
  });
});
