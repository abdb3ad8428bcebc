import { describe, expect, it } from 'vitest';
import { type Actor, newDeliveryRecord } from '../../../engine/index.js';
import { routes } from '../../../functions/api/api-handler.js';
import { type ApiDeps, matchRoute } from '../../../functions/api/router.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { aDeliveryWithEveryField } from '../../support/every-field.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

// The record of who did what (issue 32): every route that changes something records its actor,
// a job's commands in the job's history (GET /api/job/{id}/events), the others in the audit log
// (GET /api/audit). A new route that changes state fails "covers every route" until it has its case
// here, and its case fails until the route records who called it.

const ROOT = 'the-root-token';
const BILLING = `workflows:
  - name: billing
    steps:
      - name: charge
      - name: approve
        type: signal
`;

interface World {
  deps: ApiDeps;
  /** Root calls. */
  call(method: string, path: string, body?: string): Promise<Record<string, unknown>>;
  /** A running job (charge sent), one paused, one cancelled, one whose approve step waits. */
  running: string;
  paused: string;
  cancelled: string;
  approving: string;
  /** A token a route may revoke. */
  spareToken: string;
  /** The callback token of the running job's charge request (attempt 1). */
  callbackToken: string;
  /** A dead webhook delivery of the cancelled job. */
  delivery: string;
}

async function aWorld(): Promise<World> {
  const world = new SimulatedWorld();
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024, token: ROOT });
  const call = async (method: string, path: string, body = '') => {
    const response = await callApi(deps, {
      method,
      path,
      body,
      headers: { authorization: `Bearer ${ROOT}` },
    });
    await world.manager.drain();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.body}`);
    return JSON.parse(response.body) as Record<string, unknown>;
  };
  await call('PUT', '/api/workflow/billing', BILLING);
  const start = async () => (await call('POST', '/api/workflow/billing', '{}')).id as string;
  const running = await start();
  const paused = await start();
  await call('POST', `/api/job/${paused}/pause`);
  const cancelled = await start();
  await call('DELETE', `/api/job/${cancelled}`);
  const approving = await start();
  const charge = world.take().find((request) => request.jobId === approving);
  await world.reply(charge!, {});
  const spareToken = (await call('POST', '/api/tokens', '{"namespace":"default","role":"read"}'))
    .id as string;
  await world.manager.tokens.ready();
  const callbackToken = world.manager.tokens.mint(`${running}:charge`, 1);
  const delivery = newDeliveryRecord(aDeliveryWithEveryField(cancelled), world.now);
  await world.store.addDeliveries([{ ...delivery, namespace: 'default', state: 'dead' }]);
  return {
    deps,
    call,
    running,
    paused,
    cancelled,
    approving,
    spareToken,
    callbackToken,
    delivery: delivery.id,
  };
}

interface Found {
  kind: string;
  actor?: Actor;
}

/** The actor of the newest entry of `kind` in a job's history. */
async function inHistory(w: World, job: string, kind: string): Promise<Actor | undefined> {
  const page = (await w.call('GET', `/api/job/${job}/events`)) as { events: Found[] };
  return page.events.filter((entry) => entry.kind === kind).at(-1)?.actor;
}

/** The actor of the newest audit entry of `action`. */
async function inAudit(w: World, action: string): Promise<Actor | undefined> {
  const page = (await w.call('GET', '/api/audit')) as { entries: (Found & { action: string })[] };
  return page.entries.find((entry) => entry.action === action)?.actor;
}

interface ActorCase {
  method: string;
  /** `{running}`, `{paused}`, `{cancelled}`, `{approving}`, `{token}`, `{callback}` filled in. */
  path: string;
  body?: string;
  /** Where the route's call is recorded, and the actor recorded there. */
  recorded(w: World, answer: Record<string, unknown>): Promise<Actor | undefined>;
}

const CASES: ActorCase[] = [
  {
    method: 'POST',
    path: '/api/workflow/billing',
    body: '{}',
    recorded: (w, answer) => inHistory(w, answer.id as string, 'job.created'),
  },
  { method: 'DELETE', path: '/api/job/{running}', recorded: (w) => inHistory(w, w.running, 'job.cancelled') },
  {
    method: 'POST',
    path: '/api/job/{approving}/signal/approve',
    body: '{}',
    recorded: (w) => inHistory(w, w.approving, 'step.signalled'),
  },
  {
    method: 'POST',
    path: '/api/callback/{callback}',
    body: '{"type":"success","output":{"paid":true}}',
    recorded: (w) => inHistory(w, w.running, 'step.completed'),
  },
  {
    method: 'POST',
    path: '/api/job/{cancelled}/rerun',
    body: '{"from":"charge"}',
    recorded: (w) => inHistory(w, w.cancelled, 'job.rerun'),
  },
  {
    method: 'POST',
    path: '/api/job/{cancelled}/retry',
    recorded: (w) => inHistory(w, w.cancelled, 'job.retried'),
  },
  // By filter (no filter: every job, each command applied where it may be).
  {
    method: 'POST',
    path: '/api/jobs/cancel',
    recorded: (w) => inHistory(w, w.running, 'job.cancelled'),
  },
  {
    method: 'POST',
    path: '/api/jobs/retry',
    recorded: (w) => inHistory(w, w.cancelled, 'job.retried'),
  },
  {
    method: 'POST',
    path: '/api/job/{running}/pause',
    recorded: (w) => inHistory(w, w.running, 'job.paused'),
  },
  {
    method: 'POST',
    path: '/api/job/{paused}/resume',
    recorded: (w) => inHistory(w, w.paused, 'job.resumed'),
  },
  {
    method: 'PUT',
    path: '/api/workflow/billing',
    body: BILLING.replace('name: approve', 'name: approve2'),
    recorded: (w) => inAudit(w, 'workflow.registered'),
  },
  { method: 'DELETE', path: '/api/workflow/billing', recorded: (w) => inAudit(w, 'workflow.disabled') },
  {
    method: 'PUT',
    path: '/api/namespaces/default',
    body: '{"vhosts":["/"]}',
    recorded: (w) => inAudit(w, 'namespace.changed'),
  },
  {
    method: 'POST',
    path: '/api/tokens',
    body: '{"namespace":"default","role":"read"}',
    recorded: (w) => inAudit(w, 'token.created'),
  },
  { method: 'DELETE', path: '/api/tokens/{token}', recorded: (w) => inAudit(w, 'token.revoked') },
  {
    method: 'POST',
    path: '/api/deliveries/{delivery}/redeliver',
    recorded: (w) => inAudit(w, 'delivery.redelivered'),
  },
];

function filled(w: World, path: string): string {
  return path
    .replace('{running}', w.running)
    .replace('{paused}', w.paused)
    .replace('{cancelled}', w.cancelled)
    .replace('{approving}', w.approving)
    .replace('{token}', w.spareToken)
    .replace('{callback}', w.callbackToken)
    .replace('{delivery}', w.delivery);
}

describe('The record of who did what: every route that changes state names its actor', () => {
  it('covers every route that changes state, so a new one needs its case (and must record who called it)', () => {
    const covered = new Set(CASES.map((c) => matchRoute(routes, c.method, c.path).route));
    const uncovered = routes
      .filter((route) => route.auth && route.method !== 'GET' && !covered.has(route))
      .map((route) => `${route.method} ${route.path}`);
    expect(uncovered).toEqual([]);
  });

  for (const testCase of CASES) {
    it(`${testCase.method} ${testCase.path} records the token that called it, and the root`, async () => {
      const w = await aWorld();
      const created = (await w.call(
        'POST',
        '/api/tokens',
        JSON.stringify({ namespace: '*', role: 'admin', description: 'the actor check' }),
      )) as { id: string; secret: string };
      const response = await callApi(w.deps, {
        method: testCase.method,
        path: filled(w, testCase.path),
        body: testCase.body ?? '',
        headers: { authorization: `Bearer ${created.secret}` },
      });
      expect(response.status, response.body).toBeLessThan(300);
      const answer = JSON.parse(response.body) as Record<string, unknown>;
      expect(await testCase.recorded(w, answer)).toEqual({
        kind: 'token',
        id: created.id,
        description: 'the actor check',
      });
    });
  }

  it('records the root as the root', async () => {
    const w = await aWorld();
    expect(await inHistory(w, w.paused, 'job.paused')).toEqual({ kind: 'root' });
    expect(await inAudit(w, 'token.created')).toEqual({ kind: 'root' });
    expect(await inAudit(w, 'workflow.registered')).toEqual({ kind: 'root' });
  });
});
