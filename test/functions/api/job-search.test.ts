import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: order
    searchAttributes:
      customer: input.customer
    steps:
      - name: check
      - name: approval
        type: signal
        depends: [ check ]
      - name: ship
        depends: [ approval ]
`;

async function api() {
  const world = new SimulatedWorld(SqliteStore.open(':memory:'));
  await world.register(WORKFLOWS);
  const deps = worldApi(world, { maxBodyBytes: 1024 });
  const call = async (method: string, path: string, query: Record<string, string> = {}) => {
    const response = await callApi(deps, { method, path, query });
    await world.manager.drain();
    return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown> };
  };
  return { world, deps, call };
}

describe('GET /api/jobs: search on the server', () => {
  it('finds a job waiting for approval whose input.customer is c-42 in one call, and pages through a search', async () => {
    const { world, call } = await api();
    const ids: Record<string, string> = {};
    for (const customer of ['c-41', 'c-42', 'c-42', 'c-43']) {
      const id = await world.start('order', { customer });
      ids[id] = customer;
      await world.advance(10);
    }
    // The first three pass their check and wait for approval; the last is still checking.
    const checks = world.take();
    for (const request of checks.slice(0, 3)) await world.reply(request, {});
    const [first, second] = Object.keys(ids).filter((id) => ids[id] === 'c-42');

    const found = await call('GET', '/api/jobs', { status: 'waiting', attr: 'customer=c-42' });
    expect(found).toEqual({ status: 200, body: { jobs: [second, first] } });
    const page = await call('GET', '/api/jobs', { status: 'waiting', attr: 'customer=c-42', limit: '1' });
    expect(page.body.jobs).toEqual([second]);
    const next = await call('GET', '/api/jobs', {
      status: 'waiting',
      attr: 'customer=c-42',
      limit: '1',
      cursor: page.body.cursor as string,
    });
    expect(next.body).toEqual({ jobs: [first] });

    // The document and the summaries say `waiting` too, and the workflow's counts count it.
    const document = await call('GET', `/api/job/${first}`);
    expect(document.body).toMatchObject({
      status: 'waiting',
      waitingFor: [{ step: 'approval', kind: 'signal' }],
    });
    const detail = await call('GET', '/api/jobs', { status: 'waiting', detail: '1' });
    expect((detail.body.jobs as { status: string }[]).map((job) => job.status)).toEqual([
      'waiting',
      'waiting',
      'waiting',
    ]);
    const [workflow] = (await call('GET', '/api/workflows')).body as unknown as {
      jobs: Record<string, number>;
    }[];
    expect(workflow?.jobs).toMatchObject({ waiting: 3, running: 1 });
  });

  it('filters by creation time and error text, and refuses a bad filter naming it', async () => {
    const { world, call } = await api();
    const early = await world.start('order', { customer: 'c-1' });
    await world.advance(60_000);
    const late = await world.start('order', { customer: 'c-2' });
    const checks = world.take();
    const fail = (id: string, message: string) => {
      const request = checks.find((candidate) => candidate.correlationId.startsWith(id));
      return world.reply(request!, JSON.stringify({ error: message }), { type: 'error', retryable: false });
    };
    await fail(early, 'Card declined by the bank');
    await fail(late, 'address unknown');
    const since = new Date(world.now - 30_000).toISOString();
    expect((await call('GET', '/api/jobs', { status: 'all', createdAfter: since })).body.jobs).toEqual([
      late,
    ]);
    expect((await call('GET', '/api/jobs', { status: 'all', createdBefore: since })).body.jobs).toEqual([
      early,
    ]);
    expect((await call('GET', '/api/jobs', { status: 'failed', error: 'CARD declined' })).body.jobs).toEqual([
      early,
    ]);

    const bad = await call('GET', '/api/jobs', { attr: 'customer' });
    expect(bad.status).toBe(400);
    expect((bad.body.error as { message: string }).message).toMatch(
      /query parameter "attr" must be NAME=VALUE pairs/,
    );
    const badTime = await call('GET', '/api/jobs', { createdAfter: 'yesterday' });
    expect(badTime.status).toBe(400);
    expect((badTime.body.error as { message: string }).message).toMatch(
      /"createdAfter" must be an RFC 3339 time/,
    );
  });
});

describe('POST /api/jobs/cancel and /api/jobs/retry: commands by filter', () => {
  it('counts with dryRun, changes nothing then; cancels at most `limit` per call and goes on with the cursor', async () => {
    const { world, call } = await api();
    const waiting: string[] = [];
    for (let n = 0; n < 5; n++) {
      waiting.push(await world.start('order', { customer: 'c-42' }));
      await world.advance(10);
    }
    const other = await world.start('order', { customer: 'c-7' });
    for (const request of world.take()) await world.reply(request, {});
    const filter = { status: 'waiting', attr: 'customer=c-42' };

    expect((await call('POST', '/api/jobs/cancel', { ...filter, dryRun: '1' })).body).toEqual({ matched: 5 });
    expect((await call('GET', '/api/jobs', filter)).body.jobs).toHaveLength(5);

    const first = await call('POST', '/api/jobs/cancel', { ...filter, limit: '3' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ matched: 3, changed: waiting.slice(2).reverse(), refused: [] });
    const rest = await call('POST', '/api/jobs/cancel', {
      ...filter,
      limit: '3',
      cursor: first.body.cursor as string,
    });
    expect(rest.body).toEqual({ matched: 2, changed: waiting.slice(0, 2).reverse(), refused: [] });
    expect((await call('GET', '/api/jobs', { status: 'cancelled' })).body.jobs).toHaveLength(5);
    expect((await call('GET', `/api/job/${other}`)).body.status).toBe('waiting');

    // Retry by the same search, now of cancelled jobs: each runs again.
    const retried = await call('POST', '/api/jobs/retry', { status: 'cancelled', attr: 'customer=c-42' });
    expect(retried.body).toMatchObject({ matched: 5, refused: [] });
    expect((retried.body.changed as string[]).sort()).toEqual([...waiting].sort());
    expect((await call('GET', '/api/jobs', { status: 'cancelled' })).body.jobs).toEqual([]);
  });

  it('names the jobs a command does not apply to, and goes on with the others', async () => {
    const { world, call } = await api();
    const done = await world.start('order', { customer: 'c-1' });
    world.take();
    await call('DELETE', `/api/job/${done}`);
    const running = await world.start('order', { customer: 'c-1' });
    const answer = await call('POST', '/api/jobs/cancel', { attr: 'customer=c-1' });
    expect(answer.body).toEqual({
      matched: 2,
      changed: [running],
      refused: [{ uuid: done, message: `job ${done} is cancelled` }],
    });
  });
});
