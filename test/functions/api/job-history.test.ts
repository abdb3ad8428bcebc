import { describe, expect, it } from 'vitest';
import type { Actor } from '../../../engine/index.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { startTicks } from '../../../functions/manager/schedule-ticks.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

// Every command a job takes names its actor in the job's history, every reply its worker, and
// GET /api/job/{id}/events pages the history.

const ROOT = 'the-root-token';
const WORKFLOWS = `workflows:
  - name: orders
    steps:
      - name: charge
        retries: 1
      - name: approve
        type: signal
        depends: [ charge ]
      - name: ship
        depends: [ approve ]
`;

interface EventsPage {
  events: {
    seq: number;
    at: string;
    kind: string;
    step?: string;
    attempt?: number;
    message?: string;
    actor?: Actor;
    worker?: string;
  }[];
  dropped: number;
  cursor?: string;
}

async function aWorld() {
  const world = new SimulatedWorld(SqliteStore.open(':memory:'));
  await world.register(WORKFLOWS);
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024, token: ROOT });
  const call = async (method: string, path: string, secret = ROOT, body = '', query = {}) => {
    const response = await callApi(deps, {
      method,
      path,
      body,
      query,
      headers: { authorization: `Bearer ${secret}` },
    });
    await world.manager.drain();
    return response;
  };
  const token = async (description: string, role = 'run') => {
    const created = JSON.parse(
      (await call('POST', '/api/tokens', ROOT, JSON.stringify({ namespace: 'default', role, description })))
        .body,
    ) as { id: string; secret: string };
    return created;
  };
  const events = async (id: string, query: Record<string, string> = {}) => {
    const response = await call('GET', `/api/job/${id}/events`, ROOT, '', query);
    expect(response.status).toBe(200);
    return JSON.parse(response.body) as EventsPage;
  };
  return { world, call, token, events };
}

describe('GET /api/job/{id}/events: who did what', () => {
  it('names the token or the root behind start, signal, pause, resume, cancel and retry, and the worker of each attempt', async () => {
    const { world, call, token, events } = await aWorld();
    const ci = await token('ci pipeline');
    const ops = await token('on-call');
    const started = await call('POST', '/api/workflow/orders', ci.secret, '{"order":"o-1"}');
    expect(started.status).toBe(201);
    const id = (JSON.parse(started.body) as { id: string }).id;
    const [charge] = world.take();
    await world.reply(charge!, 'card declined', { type: 'error', worker: 'billing-a:41' });
    const [again] = world.take();
    await world.reply(again!, { charged: true }, { worker: 'billing-b:42' });
    expect((await call('POST', `/api/job/${id}/pause`, ops.secret)).status).toBe(200);
    expect((await call('POST', `/api/job/${id}/resume`)).status).toBe(200);
    expect((await call('POST', `/api/job/${id}/signal/approve`, ops.secret, '{"ok":true}')).status).toBe(200);
    expect((await call('DELETE', `/api/job/${id}`, ci.secret)).status).toBe(200);
    expect((await call('POST', `/api/job/${id}/retry`)).status).toBe(200);

    const ciActor = { kind: 'token', id: ci.id, description: 'ci pipeline' };
    const opsActor = { kind: 'token', id: ops.id, description: 'on-call' };
    const page = await events(id);
    const told = page.events.map(({ kind, step, attempt, actor, worker }) => ({
      kind,
      ...(step ? { step } : {}),
      ...(attempt ? { attempt } : {}),
      ...(actor ? { actor } : {}),
      ...(worker ? { worker } : {}),
    }));
    expect(told).toEqual([
      { kind: 'job.created', actor: ciActor },
      { kind: 'step.requested', step: 'charge', attempt: 1 },
      { kind: 'step.attempt_failed', step: 'charge', attempt: 1, worker: 'billing-a:41' },
      { kind: 'step.retry_scheduled', step: 'charge', attempt: 1 },
      { kind: 'step.requested', step: 'charge', attempt: 2 },
      { kind: 'step.completed', step: 'charge', attempt: 2, worker: 'billing-b:42' },
      { kind: 'step.waiting', step: 'approve', attempt: 1 },
      { kind: 'job.paused', actor: opsActor },
      { kind: 'job.resumed', actor: { kind: 'root' } },
      { kind: 'step.signalled', step: 'approve', actor: opsActor },
      { kind: 'step.completed', step: 'approve', attempt: 1 },
      { kind: 'step.requested', step: 'ship', attempt: 1 },
      { kind: 'job.cancelled', actor: ciActor },
      { kind: 'job.retried', actor: { kind: 'root' } },
      { kind: 'step.requested', step: 'ship', attempt: 2 },
    ]);
    expect(page.events.map((entry) => entry.seq)).toEqual(page.events.map((_, index) => index + 1));
    expect(page.events[2]?.message).toBe('card declined');
    expect(page.dropped).toBe(0);
    expect(page.cursor).toBeUndefined();
    for (const entry of page.events) expect(new Date(entry.at).toISOString()).toBe(entry.at);
  });

  it('names the schedule behind a tick’s job', async () => {
    const { world, events } = await aWorld();
    const logger = { info() {}, warn() {}, error() {}, debug() {} };
    await startTicks(
      (params) => world.manager.startJob(params),
      'orders',
      { cron: '0 * * * *' },
      [world.now],
      logger as never,
    );
    const [job] = (await world.store.queryJobs({ limit: 10, status: 'running' })).jobs;
    expect((await events(job!.id)).events[0]).toMatchObject({
      kind: 'job.created',
      actor: { kind: 'schedule', name: '0 * * * *' },
    });
  });

  it('pages the history with a cursor, and refuses a cursor that is not a number (400)', async () => {
    const { world, call, events } = await aWorld();
    const id = (JSON.parse((await call('POST', '/api/workflow/orders', ROOT, '{}')).body) as { id: string })
      .id;
    await world.reply(world.take()[0]!, 'down', { type: 'error' });
    const all = await events(id);
    const first = await events(id, { limit: '2' });
    expect(first.events).toEqual(all.events.slice(0, 2));
    expect(first.cursor).toBe('2');
    const rest = await events(id, { limit: '100', cursor: first.cursor as string });
    expect(rest.events).toEqual(all.events.slice(2));
    expect(rest.cursor).toBeUndefined();
    const bad = await call('GET', `/api/job/${id}/events`, ROOT, '', { cursor: 'x' });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).message).toMatch(/cursor/);
  });

  it('answers 404 for a job of another namespace, as for none', async () => {
    const { call } = await aWorld();
    const missing = await call('GET', '/api/job/00000000-0000-4000-8000-000000000000/events');
    expect(missing.status).toBe(404);
  });
});
