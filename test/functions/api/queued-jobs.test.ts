import { describe, expect, it } from 'vitest';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const LIMITED = `workflows:
  - name: limited
    maxRunning: 1
    steps:
      - name: work
`;

async function started(count: number) {
  const world = new SimulatedWorld();
  await world.register(LIMITED);
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const response = await callApi(deps, {
      method: 'POST',
      path: '/api/workflow/limited',
      body: `{"n":${n}}`,
    });
    ids.push(JSON.parse(response.body).id as string);
  }
  await world.manager.drain();
  return { world, deps, ids };
}

describe('API: queued jobs (maxRunning)', () => {
  it('shows a queued job with its place in the queue, and lists the queue in order', async () => {
    // Prepare
    const { deps, ids } = await started(3);

    // Act
    const third = JSON.parse((await callApi(deps, { method: 'GET', path: `/api/job/${ids[2]}` })).body);
    const listing = JSON.parse((await callApi(deps, { method: 'GET', path: '/api/workflow/limited' })).body);
    const filtered = JSON.parse(
      (await callApi(deps, { method: 'GET', path: '/api/jobs', query: { status: 'queued' } })).body,
    );

    // Assess
    expect(third).toMatchObject({ status: 'queued', queuePosition: 2, running: [] });
    expect(listing).toEqual({ running: [ids[0]], queued: [ids[1], ids[2]], completed: [] });
    expect([...filtered.jobs].sort()).toEqual([ids[1], ids[2]].sort());
  });

  it('takes a cancelled job out of the queue: the others move up', async () => {
    // Prepare
    const { world, deps, ids } = await started(3);

    // Act
    const cancel = await callApi(deps, { method: 'DELETE', path: `/api/job/${ids[1]}` });
    await world.manager.drain();
    const third = JSON.parse((await callApi(deps, { method: 'GET', path: `/api/job/${ids[2]}` })).body);

    // Assess
    expect(cancel.status).toBe(200);
    expect(third).toMatchObject({ status: 'queued', queuePosition: 1 });
  });

  it.each([
    ['0', '0'],
    ['-2', '-2'],
    ['2.5', '2.5'],
    ['"3"', '"3"'],
  ])('refuses maxRunning: %s with a 400 naming it, and registers nothing', async (value, shown) => {
    // Prepare
    const world = new SimulatedWorld();
    const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
    const body = `workflows:\n  - name: capped\n    maxRunning: ${value}\n    steps:\n      - name: work\n`;

    // Act
    const response = await callApi(deps, { method: 'PUT', path: '/api/workflow/capped', body });
    const after = await callApi(deps, { method: 'GET', path: '/api/workflow/capped/definition' });

    // Assess
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toContain(
      `"maxRunning" must be a whole number of at least 1 (the most jobs running at once), got ${shown}`,
    );
    expect(after.status).toBe(404);
  });
});
