import { describe, expect, it } from 'vitest';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

/*
 * issue 28: an `input:` mapping can build, from a small body, a request far past every size limit
 * (here 6,000 copies of a 100 KB string: 600 MB, more than V8 builds one string of). The command
 * that makes that request ready answers 413, not 500, and changes nothing.
 */

const WORKFLOWS = `workflows:
  - name: fan-in-place
    steps:
      - name: copies
        input: '{"x": input.l.map(e, input.s)}'
  - name: after-signal
    steps:
      - name: wait
        type: signal
      - name: copies
        depends: [wait]
        input: '{"x": steps.wait.l.map(e, steps.wait.s)}'
`;
const BLOWS_UP = JSON.stringify({ s: 'x'.repeat(100_000), l: new Array(6_000).fill(0) });

async function aWorld() {
  const world = new SimulatedWorld();
  await world.register(WORKFLOWS);
  return { world, deps: worldApi(world, { maxBodyBytes: 256 * 1024 }) };
}

describe('A request an API command would build past every size limit', () => {
  it('answers a start with 413 and creates no job', async () => {
    // Prepare
    const { world, deps } = await aWorld();
    // Act
    const response = await callApi(deps, {
      method: 'POST',
      path: '/api/workflow/fan-in-place',
      body: BLOWS_UP,
    });
    // Assess
    expect([response.status, errorOf(response).code], response.body).toEqual([413, 'payload_too_large']);
    expect(errorOf(response).message).toMatch(/^step "copies": .*gives more than 1048576 bytes/);
    expect((await world.store.queryJobs({ limit: 10 })).jobs).toEqual([]);
    expect(world.take()).toEqual([]);
  }, 120_000);

  it('answers the signal that makes it ready with 413 and leaves the job as it was', async () => {
    // Prepare
    const { world, deps } = await aWorld();
    const id = await world.start('after-signal', {});
    const before = await world.store.getJob(id);
    // Act
    const response = await callApi(deps, {
      method: 'POST',
      path: `/api/job/${id}/signal/wait`,
      body: BLOWS_UP,
    });
    // Assess
    expect([response.status, errorOf(response).code], response.body).toEqual([413, 'payload_too_large']);
    expect(await world.store.getJob(id)).toEqual(before);
    expect(world.take()).toEqual([]);
  }, 120_000);
});
