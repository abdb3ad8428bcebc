import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { routes } from '../../../functions/api/api-handler.js';
import { namespacedPath } from '../../../functions/api/namespaced-path.js';
import { type ApiDeps, matchRoute } from '../../../functions/api/router.js';
import { type ApiCall, callApi, errorOf, prototypeFingerprint, worldApi } from '../../support/api-calls.js';
import { undocumented } from '../../support/openapi-conformance.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { reportFigures, scaled } from '../../support/soak.js';

/** Sequences of requests, each on a fresh manager (a random DELETE would otherwise disable a workflow for good). */
const RUNS = scaled(400, 8000, 'FUZZ_RUNS');
const FIXED_IDS = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
];
const MAX_BODY = 16 * 1024;
const TOKEN = 'fuzz-token-T0k3n';

const WORKFLOWS = `workflows:
  - name: pipeline
    steps:
      - name: a
      - name: b
        depends: [ a ]
  - name: fan
    steps:
      - name: each
        task: t
    tasks:
      - name: t
        itemListKey: items
        steps:
          - name: hold
            type: signal
  - name: approval
    steps:
      - name: prep
      - name: approve
        type: signal
        depends: [ prep ]
`;

interface Fixture {
  world: SimulatedWorld;
  deps: ApiDeps;
  ids: string[];
}

/** A manager on `store` with three workflows and a few jobs (children included) for requests to name. */
async function fixture(store: Store, token?: string): Promise<Fixture> {
  const world = new SimulatedWorld(store);
  await world.register(WORKFLOWS);
  const ids = [
    await world.start('pipeline', { n: 1 }, FIXED_IDS[0]),
    await world.start('fan', { items: [1, 2] }, FIXED_IDS[1]),
    await world.start('approval', {}, FIXED_IDS[2]),
  ];
  const children = await store.listChildren(ids[1] as string, 'each', { limit: 10 });
  ids.push(...children.children.map((child) => child.id));
  return { world, deps: worldApi(world, { maxBodyBytes: MAX_BODY, token, waitPollMs: 5 }), ids };
}

/** Whether a request reaches a route (else it is a 404 or 405 of no operation). */
function routed(method: string, path: string): boolean {
  try {
    matchRoute(routes, method.toUpperCase(), namespacedPath(path).path);
    return true;
  } catch {
    return false;
  }
}

function requestArbitrary(ids: string[]): fc.Arbitrary<ApiCall> {
  const known = fc.constantFrom(...ids);
  const segment = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'api',
        'job',
        'jobs',
        'workflow',
        'workflows',
        'children',
        'signal',
        'retry',
        'definition',
      ),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom('pipeline', 'fan', 'approval', 'nope', 'approve', 'hold', 'a', 'each'),
    },
    { weight: 3, arbitrary: known },
    {
      weight: 1,
      arbitrary: fc.constantFrom('healthz', 'metrics', 'openapi.json', 'assets', '', '.', '..', '%2e%2e'),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '%E0%A4%A', '%00', 'NOT-A-UUID'),
    },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  );
  const value = fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '1',
      '-1',
      '1e3',
      '1.5',
      'NaN',
      '9007199254740993',
      'abc',
      'all',
      'running',
      'true',
    ),
    fc.constantFrom('MTIz', 'eyJhIjoxfQ', 'WzEsImEiXQ', '[]', '%', '__proto__'),
    known,
    fc.uuid(),
    fc.string({ maxLength: 12 }),
    fc.integer().map(String),
  );
  const query = fc
    .dictionary(
      fc.constantFrom(
        'id',
        'version',
        'interval',
        'vhost',
        'status',
        'workflow',
        'children',
        'detail',
        'limit',
        'cursor',
        'step',
        'wait',
        '__proto__',
      ),
      value,
      { maxKeys: 4 },
    )
    // A long ?wait would only make the run slow: it answers on a change or after S seconds.
    .map((q) => (q.wait !== undefined && Number(q.wait) > 0 ? { ...q, wait: '0' } : q));
  const smallBody = fc.oneof(
    fc.constantFrom(
      '',
      '{}',
      'null',
      '[1,2]',
      '"text"',
      '42',
      'not json',
      '{"a":',
      'a=1&b=2',
      '{"items": [1, 2, 3]}',
    ),
    fc.constantFrom(
      '{"__proto__": {"polluted": true}}',
      '{"constructor": {"prototype": {"polluted": true}}}',
      'name: pipeline\nsteps:\n  - name: a\n',
      'name: fresh\nsteps:\n  - name: x\n',
      'workflows:\n  - name: broken\n    steps: [ { name: a, depends: [ a ] } ]\n',
    ),
    fc.record({ id: fc.oneof(fc.uuid(), known, fc.string(), fc.integer()) }).map((o) => JSON.stringify(o)),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc
      .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
      .map((o) => JSON.stringify(o)),
    fc
      .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
      .map((o) => JSON.stringify(o)),
  );
  const body = fc.oneof(
    { weight: 20, arbitrary: smallBody },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ big: 'x'.repeat(MAX_BODY) })) },
  );
  const randomPath = fc
    .tuple(fc.array(segment, { maxLength: 6 }), fc.boolean())
    .map(([segments, slash]) => `/${segments.join('/')}${slash ? '/' : ''}`);
  const anyMethod = fc.oneof(
    fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
    fc.string({ minLength: 1, maxLength: 6 }),
  );
  const param = (name: string) =>
    name === 'id'
      ? fc.oneof({ weight: 4, arbitrary: known }, { weight: 1, arbitrary: fc.oneof(fc.uuid(), segment) })
      : name === 'name'
        ? fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom('pipeline', 'fan', 'approval', 'fresh') },
            { weight: 1, arbitrary: segment },
          )
        : name === 'step'
          ? fc.constantFrom('approve', 'hold', 'a', 'prep', 'each', 'nope', '__proto__')
          : segment;
  // Mostly real routes with plausible parameters, so that the fuzz reaches the handlers.
  const start = routes.filter((route) => route.method === 'POST' && route.path === '/api/workflow/{name}');
  const routeCall = fc.constantFrom(...routes, ...start, ...start, ...start).chain((route) => {
    const names = [...route.path.matchAll(/\{(\w+)\+?\}/g)].map((match) => match[1] as string);
    return fc.record({
      method: fc.oneof(
        { weight: 5, arbitrary: fc.constant(route.method as string) },
        { weight: 1, arbitrary: anyMethod },
      ),
      path: fc.tuple(...names.map(param)).map((values) => {
        let path = route.path;
        values.forEach((value, i) => {
          path = path.replace(new RegExp(`\\{${names[i]}\\+?\\}`), encodeURIComponent(value));
        });
        return path;
      }),
    });
  });
  const randomCall = fc.record({ method: anyMethod, path: randomPath });
  return fc
    .record({
      target: fc.oneof({ weight: 4, arbitrary: routeCall }, { weight: 1, arbitrary: randomCall }),
      query: fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: query }),
      headers: fc.record(
        {
          'content-type': fc.constantFrom(
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/yaml',
            '',
          ),
          authorization: fc.constantFrom(
            '',
            'Bearer',
            'Bearer wrong',
            `Bearer ${TOKEN}x`,
            'Basic Zm9vOmJhcg==',
            `bearer ${TOKEN.slice(1)}`,
          ),
        },
        { requiredKeys: [] },
      ),
      body,
    })
    .map(({ target, ...rest }) => ({ ...target, ...rest }));
}

async function topLevelJobs(store: Store): Promise<number> {
  return (await store.queryJobs({ limit: 100_000 })).jobs.length;
}

function isJsonResponse(headers: Record<string, string> | undefined): boolean {
  return (headers?.['content-type'] ?? '').startsWith('application/json');
}

const figures: Record<string, unknown> = {};

describe('Fuzz: method, path, query and body against the API handler', () => {
  const before = prototypeFingerprint();
  afterAll(() => {
    expect(prototypeFingerprint()).toBe(before);
    reportFigures('API fuzz', figures);
  });

  const stores: [string, () => Store][] = [
    ['the in-memory store', () => new MemoryStore()],
    ['the SQLite store (serve)', () => SqliteStore.open(':memory:')],
  ];

  it.each(stores)(
    'on %s: every answer is JSON, 2xx or 4xx, and only a 201 adds a job',
    async (name, open) => {
      // Children ids derive from their parent's: every fresh fixture has the same ids.
      const { ids } = await fixture(new MemoryStore());
      let requests = 0;
      const statuses: Record<number, number> = {};
      await fc.assert(
        fc.asyncProperty(fc.array(requestArbitrary(ids), { minLength: 1, maxLength: 6 }), async (calls) => {
          const store = open();
          const { deps } = await fixture(store);
          try {
            for (const call of calls) {
              // A foreign job-list cursor on SQLite is the known 500 of test/functions/api/job-cursor.test.ts.
              if (
                store instanceof SqliteStore &&
                call.query?.cursor &&
                call.path.replace(/\/$/, '') === '/api/jobs'
              )
                continue;
              const jobsBefore = await topLevelJobs(store);
              const response = await callApi(deps, call);
              requests++;
              statuses[response.status] = (statuses[response.status] ?? 0) + 1;
              const where = `${call.method} ${call.path}?${new URLSearchParams(call.query)} -> ${response.status} ${response.body.slice(0, 200)}`;
              // 501 only from the one route a handler without streams cannot serve (GET /api/events).
              const cannotStream =
                response.status === 501 &&
                /\/events\/?$/.test(call.path) &&
                /"code":"not_implemented"/.test(response.body);
              expect(
                (response.status >= 200 &&
                  response.status < 500 &&
                  !(response.status >= 300 && response.status < 400)) ||
                  cannotStream,
                where,
              ).toBe(true);
              // HEAD answers have no body when they succeed (and node:http and API Gateway drop any body).
              const head = call.method.toUpperCase() === 'HEAD';
              if (isJsonResponse(response.headers) && !(head && response.status < 300))
                expect(() => JSON.parse(response.body), where).not.toThrow();
              if (response.status >= 400) {
                expect(isJsonResponse(response.headers), where).toBe(true);
                expect(() => errorOf(response), where).not.toThrow();
              }
              // The API description lists the answer, and its body is what it documents.
              if (routed(call.method, call.path)) {
                expect(undocumented(call.method, call.path, response), where).toBeUndefined();
              }
              const added = (await topLevelJobs(store)) - jobsBefore;
              expect(added, where).toBe(
                response.status === 201 && call.method.toUpperCase() === 'POST' ? 1 : 0,
              );
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: RUNS },
      );
      figures[`requests (${name})`] = requests;
      figures[`answers by status (${name})`] = statuses;
    },
  );

  it('with a token: no request without it reaches anything but the dashboard and the API description', async () => {
    const store = new MemoryStore();
    const { deps, ids } = await fixture(store, TOKEN);
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(requestArbitrary(ids), async (call) => {
        const jobsBefore = await topLevelJobs(store);
        const response = await callApi(deps, call);
        requests++;
        let open = false;
        try {
          open = !matchRoute(routes, call.method.toUpperCase(), call.path).route.auth;
        } catch {
          // no such route: 404 or 405
        }
        const where = `${call.method} ${call.path} (${call.headers?.authorization}) -> ${response.status} ${response.body.slice(0, 120)}`;
        if (open) expect([200, 404, 413], where).toContain(response.status);
        else expect([401, 403, 404, 405, 413], where).toContain(response.status);
        expect(await topLevelJobs(store), where).toBe(jobsBefore);
      }),
      { numRuns: RUNS },
    );
    figures['requests without the token'] = requests;
  });
});
