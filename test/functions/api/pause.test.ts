import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: pipeline
    steps:
      - name: a
      - name: b
        depends: [ a ]
  - name: fan
    steps:
      - name: each
        task: item
    tasks:
      - name: item
        itemListKey: items
        steps:
          - name: work
`;

async function api() {
  const world = new SimulatedWorld(SqliteStore.open(':memory:'));
  await world.register(WORKFLOWS);
  const deps = worldApi(world, { maxBodyBytes: 1024 });
  const post = async (path: string) => {
    const response = await callApi(deps, { method: 'POST', path });
    await world.manager.drain();
    return response;
  };
  const list = async (status: string) =>
    (
      JSON.parse((await callApi(deps, { method: 'GET', path: '/api/jobs', query: { status } })).body) as {
        jobs: string[];
      }
    ).jobs;
  return { world, deps, post, list };
}

describe('POST /api/job/{id}/pause and /resume', () => {
  it('pauses and resumes a job, each idempotent, and answers the job document', async () => {
    const { world, post, list } = await api();
    const id = await world.start('pipeline');
    const a = world.take()[0]!;
    const paused = await post(`/api/job/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(JSON.parse(paused.body)).toMatchObject({ uuid: id, status: 'paused' });
    expect((await post(`/api/job/${id}/pause`)).status).toBe(200);
    expect(await list('paused')).toEqual([id]);
    expect(await list('running')).toEqual([]);
    await world.reply(a, { x: 1 });
    expect(world.take()).toEqual([]);
    const resumed = await post(`/api/job/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(JSON.parse(resumed.body)).toMatchObject({ status: 'running' });
    expect(world.take().map((request) => request.step)).toEqual(['b']);
    expect((await post(`/api/job/${id}/resume`)).status).toBe(200);
    expect(await list('running')).toEqual([id]);
  });

  it('answers 409 for a finished job, 404 for an unknown one, 400 for a bad id', async () => {
    const { world, post } = await api();
    const id = await world.start('pipeline');
    await post(`/api/job/${id}/pause`);
    const cancelled = await callApi(worldApi(world, { maxBodyBytes: 1024 }), {
      method: 'DELETE',
      path: `/api/job/${id}`,
    });
    expect(JSON.parse(cancelled.body)).toMatchObject({ status: 'cancelled' });
    for (const verb of ['pause', 'resume']) {
      const response = await post(`/api/job/${id}/${verb}`);
      expect(response.status).toBe(409);
      expect(errorOf(response).message).toBe('the job is already cancelled');
      expect((await post(`/api/job/${crypto.randomUUID()}/${verb}`)).status).toBe(404);
      expect((await post(`/api/job/nope/${verb}`)).status).toBe(400);
    }
  });

  it('counts paused jobs among the workflow job counts, and a child id pauses its top-level job', async () => {
    const { world, deps, post } = await api();
    const id = await world.start('fan', { items: [1, 2] });
    const child = world.take()[0]!;
    const paused = await post(`/api/job/${child.jobId}/pause`);
    expect(JSON.parse(paused.body)).toMatchObject({ uuid: id, status: 'paused' });
    const { children } = await world.store.listChildren(id, 'each', { limit: 10 });
    expect(children.map((c) => c.status)).toEqual(['paused', 'paused']);
    expect(await world.store.countJobs('fan')).toMatchObject({ paused: 1, running: 0 });
    const workflows = JSON.parse((await callApi(deps, { method: 'GET', path: '/api/workflows' })).body) as {
      name: string;
      job_count: number;
      jobs: Record<string, number>;
    }[];
    expect(workflows.find((w) => w.name === 'fan')).toMatchObject({ job_count: 1, jobs: { paused: 1 } });
    const listed = JSON.parse((await callApi(deps, { method: 'GET', path: '/api/workflow/fan' })).body);
    expect(listed.running).toEqual([id]);
  });
});
