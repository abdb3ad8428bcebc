import { describe, expect, it } from 'vitest';
import type { Role } from '../../../engine/access/roles.js';
import { newDeliveryRecord } from '../../../engine/index.js';
import { routes } from '../../../functions/api/api-handler.js';
import { isNamespacedApiPath } from '../../../functions/api/namespace-scope.js';
import { type ApiDeps, matchRoute } from '../../../functions/api/router.js';
import { EventStreams } from '../../../functions/local/event-streams.js';
import { JobEventHub } from '../../../functions/manager/job-event-hub.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { aDeliveryWithEveryField } from '../../support/every-field.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

// Every route under each role, for a token of one namespace and a token of every namespace (`*`).
// RELIABILITY.md's security table is verified by this file.

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
  /** A running job of team-a's billing, and a cancelled one (for retry). */
  jobA: string;
  cancelledA: string;
  /** A running job of team-b's billing. */
  jobB: string;
  /** A read token of team-a that a route may revoke. */
  spareToken: string;
  /** The callback token of the first attempt of jobA's `charge`. */
  callbackA: string;
  /** A dead webhook delivery of jobA. */
  deliveryA: string;
  secret(namespace: string, role: Role): Promise<string>;
}

const asRoot = { authorization: `Bearer ${ROOT}` };

async function aWorld(): Promise<World> {
  const world = new SimulatedWorld();
  const deps = worldApi(world, {
    maxBodyBytes: 64 * 1024,
    token: ROOT,
    metricsText: async () => '# none\n',
    // serve's stream of events (the route answers 501 without it); the guard looks at who may open one.
    events: new EventStreams(new JobEventHub(), new AbortController().signal),
  });
  const call = async (method: string, path: string, body = '', headers = asRoot) => {
    const response = await callApi(deps, { method, path, body, headers });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.body}`);
    return JSON.parse(response.body) as Record<string, string>;
  };
  for (const namespace of ['team-a', 'team-b'])
    await call('PUT', `/api/ns/${namespace}/workflow/billing`, BILLING);
  const jobA = (await call('POST', '/api/ns/team-a/workflow/billing', '{}')).id as string;
  const cancelledA = (await call('POST', '/api/ns/team-a/workflow/billing', '{}')).id as string;
  await call('DELETE', `/api/ns/team-a/job/${cancelledA}`);
  const jobB = (await call('POST', '/api/ns/team-b/workflow/billing', '{}')).id as string;
  const spareToken = (await call('POST', '/api/tokens', '{"namespace":"team-a","role":"read"}')).id as string;
  const secret = async (namespace: string, role: Role) =>
    (
      await call(
        'POST',
        '/api/tokens',
        JSON.stringify({ namespace, role, description: `${namespace} ${role}` }),
      )
    ).secret as string;
  await world.manager.tokens.ready();
  const callbackA = world.manager.tokens.mint(`${jobA}:charge`, 1);
  const delivery = newDeliveryRecord({ ...aDeliveryWithEveryField(jobA), namespace: 'team-a' }, world.now);
  await world.store.addDeliveries([{ ...delivery, state: 'dead' }]);
  return { deps, jobA, cancelledA, jobB, spareToken, callbackA, deliveryA: delivery.id, secret };
}

interface RouteCase {
  method: string;
  /** Under `/api/ns/team-a` when namespaced; `{job}`, `{cancelled}`, `{token}`, `{callback}` filled in. */
  path: string;
  body?: string;
  needs: Role;
  namespaced: boolean;
  /** Only a token of `*` may call it. */
  everyNamespace?: boolean;
}

const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/api/workflows', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/workflow/billing', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/workflow/billing/definition', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/workflow/billing/schedules', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/schedules', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/jobs', needs: 'read', namespaced: true },
  { method: 'POST', path: '/api/jobs/cancel?dryRun=1', needs: 'run', namespaced: true },
  { method: 'POST', path: '/api/jobs/retry?dryRun=1', needs: 'run', namespaced: true },
  { method: 'GET', path: '/api/job/{job}', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/job/{job}/children?step=charge', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/job/{job}/events', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/job/{job}/deliveries', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/deliveries?state=dead', needs: 'read', namespaced: true },
  { method: 'GET', path: '/api/events?kinds=job.completed', needs: 'read', namespaced: true },
  { method: 'POST', path: '/api/deliveries/{delivery}/redeliver', needs: 'run', namespaced: true },
  { method: 'GET', path: '/api/queues', needs: 'read', namespaced: true },
  { method: 'POST', path: '/api/workflow/billing', body: '{}', needs: 'run', namespaced: true },
  { method: 'DELETE', path: '/api/job/{job}', needs: 'run', namespaced: true },
  { method: 'POST', path: '/api/job/{job}/signal/approve', body: '{}', needs: 'run', namespaced: true },
  { method: 'POST', path: '/api/job/{cancelled}/retry', needs: 'run', namespaced: true },
  {
    method: 'POST',
    path: '/api/job/{cancelled}/rerun',
    body: '{"from":"charge"}',
    needs: 'run',
    namespaced: true,
  },
  {
    method: 'POST',
    path: '/api/callback/{callback}',
    body: '{"type":"suspend"}',
    needs: 'run',
    namespaced: true,
  },
  { method: 'POST', path: '/api/job/{job}/pause', needs: 'run', namespaced: true },
  { method: 'POST', path: '/api/job/{job}/resume', needs: 'run', namespaced: true },
  { method: 'PUT', path: '/api/workflow/billing', body: BILLING, needs: 'admin', namespaced: true },
  { method: 'DELETE', path: '/api/workflow/billing', needs: 'admin', namespaced: true },
  { method: 'GET', path: '/api/namespaces', needs: 'read', namespaced: false },
  { method: 'GET', path: '/api/namespaces/team-a', needs: 'read', namespaced: false },
  {
    method: 'PUT',
    path: '/api/namespaces/team-a',
    body: '{"vhosts":["/"]}',
    needs: 'admin',
    namespaced: false,
    everyNamespace: true,
  },
  { method: 'GET', path: '/healthz', needs: 'read', namespaced: false },
  { method: 'GET', path: '/api/tokens', needs: 'admin', namespaced: false },
  { method: 'GET', path: '/api/audit', needs: 'admin', namespaced: true },
  {
    method: 'POST',
    path: '/api/tokens',
    body: '{"namespace":"team-a","role":"read"}',
    needs: 'admin',
    namespaced: false,
  },
  { method: 'DELETE', path: '/api/tokens/{token}', needs: 'admin', namespaced: false },
  { method: 'GET', path: '/metrics', needs: 'read', namespaced: false, everyNamespace: true },
];

const ORDER: Role[] = ['read', 'run', 'admin'];

async function send(w: World, route: RouteCase, prefix: string, secret: string) {
  const filled = route.path
    .replace('{job}', w.jobA)
    .replace('{cancelled}', w.cancelledA)
    .replace('{callback}', w.callbackA)
    .replace('{token}', w.spareToken)
    .replace('{delivery}', w.deliveryA);
  // `prefix` takes the place of `/api`: `/api/ns/team-a`, or `/api` itself for `default`.
  const [path, search] = (route.namespaced ? `${prefix}${filled.slice('/api'.length)}` : filled).split(
    '?',
  ) as [string, string?];
  const query = Object.fromEntries(new URLSearchParams(search ?? ''));
  return callApi(w.deps, {
    method: route.method,
    path,
    query,
    body: route.body ?? '',
    headers: { authorization: `Bearer ${secret}` },
  });
}

describe('Scoped tokens: every route under each role', () => {
  for (const scope of ['team-a', '*'] as const) {
    for (const role of ORDER) {
      for (const route of ROUTES) {
        const allowed =
          ORDER.indexOf(role) >= ORDER.indexOf(route.needs) && (!route.everyNamespace || scope === '*');
        it(`${scope} ${role}: ${route.method} ${route.path} is ${allowed ? 'allowed' : 'refused (403)'}`, async () => {
          // Prepare
          const w = await aWorld();
          const secret = await w.secret(scope, role);
          // Act
          const response = await send(w, route, '/api/ns/team-a', secret);
          // Assess
          if (allowed) expect(response.status, response.body).toBeLessThan(300);
          else expect([response.status, errorOf(response).code], response.body).toEqual([403, 'forbidden']);
        });
      }
    }
  }

  for (const role of ORDER) {
    it(`a team-a ${role} token finds nothing in team-b, nor in default, on any namespaced route (404)`, async () => {
      const w = await aWorld();
      const secret = await w.secret('team-a', role);
      for (const route of ROUTES.filter((candidate) => candidate.namespaced)) {
        for (const prefix of ['/api/ns/team-b', '/api']) {
          const response = await send(w, route, prefix, secret);
          expect(response.status, `${route.method} ${prefix}${route.path}`).toBe(404);
        }
      }
    });
  }

  for (const scope of ['team-a', '*']) {
    for (const role of ORDER) {
      it(`a ${scope} ${role} token reads another namespace's job by id as absent (404)`, async () => {
        const w = await aWorld();
        const secret = await w.secret(scope, role);
        const auth = { authorization: `Bearer ${secret}` };
        const viaOwn = await callApi(w.deps, {
          method: 'GET',
          path: `/api/ns/team-a/job/${w.jobB}`,
          headers: auth,
        });
        expect([viaOwn.status, errorOf(viaOwn).message]).toEqual([404, `no job ${w.jobB}`]);
        const viaDefault = await callApi(w.deps, {
          method: 'GET',
          path: `/api/job/${w.jobB}`,
          headers: auth,
        });
        expect(viaDefault.status).toBe(404);
        // A command answers as it would for a job that does not exist: 404, or 403 for a read token
        // (refused before any job is read).
        const cancel = await callApi(w.deps, {
          method: 'DELETE',
          path: `/api/ns/team-a/job/${w.jobB}`,
          headers: auth,
        });
        const absent = '0b7c2d9e-9f0a-4a51-9b7e-0c1d2e3f4a5b';
        const cancelAbsent = await callApi(w.deps, {
          method: 'DELETE',
          path: `/api/ns/team-a/job/${absent}`,
          headers: auth,
        });
        expect(cancel.status).toBe(role === 'read' ? 403 : 404);
        expect(cancel.body.replace(w.jobB, 'ID')).toBe(cancelAbsent.body.replace(absent, 'ID'));
      });
    }
  }
});

describe('Scoped tokens: the route table', () => {
  const id = '0b7c2d9e-9f0a-4a51-9b7e-0c1d2e3f4a5b';
  const routeOf = (route: RouteCase) => {
    const path = route.path
      .replace(/\{(job|cancelled)\}/, id)
      .replace('{token}', '0123456789abcdef')
      .replace('{callback}', 'swt1.x');
    return matchRoute(routes, route.method, path.split('?')[0] as string).route;
  };

  it('covers every route of the router in the cases above, so a new route needs its case (and its role)', () => {
    const matched = new Set(ROUTES.map(routeOf));
    const uncovered = routes.filter((route) => route.auth && !matched.has(route));
    expect(uncovered.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  it("has each case hold the route's own decision: its role, whether a namespace scopes it, whether it shows every namespace", () => {
    for (const testCase of ROUTES) {
      const route = routeOf(testCase);
      const declared = route.auth
        ? { role: route.role, namespaced: route.namespaced, everyNamespace: route.everyNamespace === true }
        : 'open';
      expect(declared, `${testCase.method} ${testCase.path}`).toEqual({
        role: testCase.needs,
        namespaced: testCase.namespaced,
        everyNamespace: testCase.everyNamespace === true,
      });
    }
  });

  it('serves beneath /api/ns/{namespace} exactly the routes a namespace scopes, as the CLI and the dashboard scope them', () => {
    for (const route of routes) {
      const concrete = route.path.replace(/\{[^}]+\}/g, 'x');
      const scoped = route.auth && route.namespaced;
      expect(isNamespacedApiPath(concrete), `${route.method} ${route.path}`).toBe(scoped);
    }
  });
});

describe('Scoped tokens: create, list, revoke', () => {
  it('answers the secret once, lists tokens without secrets or hashes, and refuses a revoked token at once (401)', async () => {
    // Prepare
    const w = await aWorld();
    const secret = await w.secret('team-a', 'run');
    const auth = { authorization: `Bearer ${secret}` };
    const listed = await callApi(w.deps, { method: 'GET', path: '/api/tokens', headers: asRoot });
    const tokens = (JSON.parse(listed.body) as { tokens: Record<string, unknown>[] }).tokens;
    expect(listed.body).not.toContain(secret);
    expect(tokens.every((token) => !('secret' in token) && !('hash' in token))).toBe(true);
    const mine = tokens.find((token) => token.description === 'team-a run');
    expect(mine).toMatchObject({ namespace: 'team-a', role: 'run' });
    expect(
      (await callApi(w.deps, { method: 'GET', path: '/api/ns/team-a/jobs', headers: auth })).status,
    ).toBe(200);
    // Act
    const revoked = await callApi(w.deps, {
      method: 'DELETE',
      path: `/api/tokens/${mine?.id}`,
      headers: asRoot,
    });
    // Assess
    expect(revoked.status).toBe(200);
    const after = await callApi(w.deps, { method: 'GET', path: '/api/ns/team-a/jobs', headers: auth });
    expect([after.status, errorOf(after).code]).toEqual([401, 'unauthorized']);
    const unknown = await callApi(w.deps, {
      method: 'GET',
      path: '/api/ns/team-a/jobs',
      headers: { authorization: 'Bearer swy_not-a-token' },
    });
    expect(unknown.status).toBe(401);
  });

  it('lets a namespace admin grant, see and revoke its own namespace only', async () => {
    const w = await aWorld();
    const admin = { authorization: `Bearer ${await w.secret('team-a', 'admin')}` };
    await w.secret('team-b', 'read');
    const other = await callApi(w.deps, {
      method: 'POST',
      path: '/api/tokens',
      body: '{"namespace":"team-b","role":"read"}',
      headers: admin,
    });
    expect(other.status).toBe(403);
    const every = await callApi(w.deps, {
      method: 'POST',
      path: '/api/tokens',
      body: '{"namespace":"*","role":"read"}',
      headers: admin,
    });
    expect(every.status).toBe(403);
    const listed = JSON.parse(
      (await callApi(w.deps, { method: 'GET', path: '/api/tokens', headers: admin })).body,
    );
    expect(new Set(listed.tokens.map((token: { namespace: string }) => token.namespace))).toEqual(
      new Set(['team-a']),
    );
    const all = JSON.parse(
      (await callApi(w.deps, { method: 'GET', path: '/api/tokens', headers: asRoot })).body,
    );
    const teamB = all.tokens.find((token: { namespace: string }) => token.namespace === 'team-b');
    const revoke = await callApi(w.deps, {
      method: 'DELETE',
      path: `/api/tokens/${teamB.id}`,
      headers: admin,
    });
    expect(revoke.status).toBe(404);
  });

  it('shows a token the namespaces it sees', async () => {
    const w = await aWorld();
    const scoped = await callApi(w.deps, {
      method: 'GET',
      path: '/api/namespaces',
      headers: { authorization: `Bearer ${await w.secret('team-b', 'read')}` },
    });
    expect(JSON.parse(scoped.body)).toEqual({
      namespaces: ['team-b'],
      role: 'read',
      scope: 'team-b',
      settings: [{ namespace: 'team-b' }],
    });
    const root = await callApi(w.deps, { method: 'GET', path: '/api/namespaces', headers: asRoot });
    expect(JSON.parse(root.body)).toEqual({
      namespaces: ['default', 'team-a', 'team-b'],
      role: 'admin',
      scope: '*',
      settings: [{ namespace: 'default' }, { namespace: 'team-a' }, { namespace: 'team-b' }],
    });
  });
});

describe('Scoped tokens and namespaces: bad input (400, nothing created)', () => {
  const listTokens = async (w: World) =>
    JSON.parse((await callApi(w.deps, { method: 'GET', path: '/api/tokens', headers: asRoot })).body).tokens;

  it.each([
    [
      'a namespace with a slash',
      '{"namespace":"team/a","role":"read"}',
      /"namespace" must be a namespace .*, got "team\/a"/,
    ],
    [
      'a role that does not exist',
      '{"namespace":"team-a","role":"owner"}',
      /"role" must be one of read, run, admin/,
    ],
    ['no namespace', '{"role":"read"}', /"namespace"/],
    ['an unknown field', '{"namespace":"team-a","role":"read","expires":"1d"}', /unknown field "expires"/],
    [
      'a description that is not text',
      '{"namespace":"team-a","role":"read","description":7}',
      /"description"/,
    ],
    ['a body that is not an object', '["team-a"]', /token request/],
  ])('refuses a token with %s', async (_, body, message) => {
    const w = await aWorld();
    const before = await listTokens(w);
    const response = await callApi(w.deps, { method: 'POST', path: '/api/tokens', body, headers: asRoot });
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toMatch(message);
    expect(await listTokens(w)).toEqual(before);
  });

  it('refuses a namespace in a path that cannot be one, and registers nothing', async () => {
    const w = await aWorld();
    for (const path of [
      '/api/ns/a%2Fb/workflow/billing',
      '/api/ns/9lives/workflow/billing',
      '/api/ns/%E0%A4%A/workflows',
    ]) {
      const response = await callApi(w.deps, { method: 'PUT', path, body: BILLING, headers: asRoot });
      expect(response.status, path).toBe(400);
    }
    const namespaces = await callApi(w.deps, { method: 'GET', path: '/api/namespaces', headers: asRoot });
    expect(JSON.parse(namespaces.body).namespaces).toEqual(['default', 'team-a', 'team-b']);
  });

  it('refuses a definition whose namespace: differs from the path', async () => {
    const w = await aWorld();
    const response = await callApi(w.deps, {
      method: 'PUT',
      path: '/api/ns/team-c/workflow/billing',
      body: `namespace: team-d\n${BILLING}`,
      headers: asRoot,
    });
    expect([response.status, errorOf(response).message]).toEqual([
      400,
      'the body names namespace "team-d", but the path acts in "team-c"',
    ]);
  });
});

describe('Namespaces through the API', () => {
  it('keeps two workflows named billing apart: listings, definitions, jobs and queue prefixes', async () => {
    const w = await aWorld();
    const prefix = await callApi(w.deps, {
      method: 'PUT',
      path: '/api/namespaces/team-c',
      body: '{"queuePrefix":"team-c."}',
      headers: asRoot,
    });
    expect(prefix.status).toBe(200);
    const put = await callApi(w.deps, {
      method: 'PUT',
      path: '/api/ns/team-c/workflow/billing',
      body: `queuePrefix: team-c.\n${BILLING}`,
      headers: asRoot,
    });
    expect(put.status).toBe(201);
    const definition = JSON.parse(
      (
        await callApi(w.deps, {
          method: 'GET',
          path: '/api/ns/team-c/workflow/billing/definition',
          headers: asRoot,
        })
      ).body,
    );
    expect(definition.definition).toMatchObject({
      name: 'billing',
      steps: [
        { name: 'charge', queue: 'team-c.charge' },
        { name: 'approve', type: 'signal' },
      ],
    });
    const listA = JSON.parse(
      (await callApi(w.deps, { method: 'GET', path: '/api/ns/team-a/workflows', headers: asRoot })).body,
    );
    expect(listA.map((workflow: { name: string }) => workflow.name)).toEqual(['billing']);
    // Its job waits for its approval: listed as waiting, counted with the running ones.
    expect(listA[0].jobs.waiting).toBe(1);
    expect(listA[0].job_count).toBe(1);
    const listDefault = JSON.parse(
      (await callApi(w.deps, { method: 'GET', path: '/api/workflows', headers: asRoot })).body,
    );
    expect(listDefault).toEqual([]);
    const jobs = JSON.parse(
      (
        await callApi(w.deps, {
          method: 'GET',
          path: '/api/ns/team-b/jobs',
          query: { detail: '1', status: 'waiting' },
          headers: asRoot,
        })
      ).body,
    );
    expect(jobs.jobs).toEqual([
      expect.objectContaining({ uuid: w.jobB, workflow: 'billing', namespace: 'team-b' }),
    ]);
    const document = JSON.parse(
      (await callApi(w.deps, { method: 'GET', path: `/api/ns/team-a/job/${w.jobA}`, headers: asRoot })).body,
    );
    expect(document).toMatchObject({ uuid: w.jobA, workflow: 'billing', namespace: 'team-a' });
  });
});
