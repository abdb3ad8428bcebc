import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { routes } from '../../../functions/api/api-handler.js';
import { ErrorText } from '../../../functions/api/job-search.js';
import type { ApiDeps, ParameterSpec, Route } from '../../../functions/api/router.js';
import {
  AssetPath,
  JobId,
  NamespaceName,
  StepName,
  TokenId,
  Vhost,
  WorkflowName,
} from '../../../functions/api/schemas/parameters.js';
import { callApi, worldApi } from '../../support/api-calls.js';
import { startTestServe, type TestServe } from '../../support/local-serve.js';
import { undocumented } from '../../support/openapi-conformance.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

/*
 * issue 28, "names are names": every route of the router (each method, namespaced and not) walked with
 * names that try to reach another namespace — `%2F`, `..`, `%2E%2E`, encoded dots, unicode lookalikes
 * of `/`, case variants of the namespace — from a token of `default` and from a token of team-a, both
 * admins (the most a token may do), against team-b. Every answer is 404 or 400 (403 where a token asks
 * to grant team-b), and the store holds exactly what it held before. Once on the API handler in this
 * process, once on serve's HTTP server (raw request paths, RabbitMQ, SQLite).
 */

const ROOT = 'the-root-token-of-the-walk';
const BILLING = `workflows:
  - name: billing
    steps:
      - name: approve
        type: signal
      - name: settle
        type: signal
        depends: [approve]
`;

/** What a host needs to be walked: raw requests, and its SQLite file to compare. */
interface Host {
  send(
    method: string,
    rawPath: string,
    body: string,
    token: string,
  ): Promise<{ status: number; body: string }>;
  dbPath: string;
  close(): Promise<void>;
}

interface Targets {
  /** team-b's running job, and its scheduled one. */
  jobB: string;
  scheduledB: string;
  tokenB: string;
  /** The walkers' own running jobs, to name where a route needs a job of theirs. */
  jobDefault: string;
  jobA: string;
  walkers: { name: string; secret: string; home: string; job: string }[];
}

const inProcess = async (): Promise<Host> => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-walk-'));
  const dbPath = join(dir, 'walk.db');
  const store = SqliteStore.open(dbPath);
  const world = new SimulatedWorld(store);
  // The real clock, as serve's: a delayed start is within a year of it.
  world.now = Date.now();
  const deps: ApiDeps = worldApi(world, { maxBodyBytes: 64 * 1024, token: ROOT });
  return {
    dbPath,
    async send(method, rawPath, body, token) {
      const [path, search = ''] = rawPath.split('?') as [string, string?];
      const query: Record<string, string[]> = {};
      for (const [name, value] of new URLSearchParams(search)) query[name] = [...(query[name] ?? []), value];
      const response = await callApi(deps, {
        method,
        path,
        query,
        body,
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: response.status, body: response.body };
    },
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

const onServe = async (): Promise<Host> => {
  const serve: TestServe = await startTestServe(BILLING, { token: ROOT });
  const { hostname, port } = new URL(serve.url);
  return {
    dbPath: serve.dbPath,
    // node:http sends the path as given: no client normalises `..` or decodes anything first.
    send: (method, rawPath, body, token) =>
      new Promise((resolve, reject) => {
        const outgoing = httpRequest(
          { host: hostname, port, method, path: rawPath, headers: { authorization: `Bearer ${token}` } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
            );
          },
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      }),
    close: () => serve.stop(),
  };
};

/**
 * Every row of every table of the SQLite file, in a stable order. The store holds the file exclusively,
 * so a copy of it and its write-ahead log is read (SQLite replays the log into the copy).
 */
async function contents(dbPath: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-walk-copy-'));
  try {
    await copyFile(dbPath, join(dir, 'copy.db'));
    await copyFile(`${dbPath}-wal`, join(dir, 'copy.db-wal')).catch(() => undefined);
    const db = new Database(join(dir, 'copy.db'));
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .all() as { name: string }[];
      const dump: Record<string, string[]> = {};
      for (const { name } of tables) {
        const rows = db.prepare(`SELECT * FROM "${name}"`).all() as unknown[];
        dump[name] = rows.map((row) => JSON.stringify(row)).sort();
      }
      return JSON.stringify(dump);
    } finally {
      db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** team-b's workflow, jobs and token; default's and team-a's own, and a token of each to walk with. */
async function populate(host: Host): Promise<Targets> {
  const root = async (method: string, path: string, body = '') => {
    const response = await host.send(method, path, body, ROOT);
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.body}`);
    return JSON.parse(response.body) as Record<string, string>;
  };
  for (const prefix of ['/api', '/api/ns/team-a', '/api/ns/team-b'])
    await root('PUT', `${prefix}/workflow/billing`, BILLING);
  const later = new Date(Date.now() + 180 * 86_400_000).toISOString();
  const jobB = (await root('POST', '/api/ns/team-b/workflow/billing', '{"card":"4111-team-b-secret"}'))
    .id as string;
  const scheduledB = (await root('POST', `/api/ns/team-b/workflow/billing?at=${later}`, '{}')).id as string;
  const jobDefault = (await root('POST', '/api/workflow/billing', '{}')).id as string;
  const jobA = (await root('POST', '/api/ns/team-a/workflow/billing', '{}')).id as string;
  const tokenB = (await root('POST', '/api/tokens', '{"namespace":"team-b","role":"admin"}')).id as string;
  const secret = async (namespace: string) =>
    (await root('POST', '/api/tokens', JSON.stringify({ namespace, role: 'admin' }))).secret as string;
  return {
    jobB,
    scheduledB,
    tokenB,
    jobDefault,
    jobA,
    walkers: [
      { name: 'a default admin token', secret: await secret('default'), home: '/api', job: jobDefault },
      { name: 'a team-a admin token', secret: await secret('team-a'), home: '/api/ns/team-a', job: jobA },
    ],
  };
}

// Hostile spellings, already percent-encoded as they go on the wire.
const SLASHES = [
  '%2F',
  '%2f',
  '%EF%BC%8F' /* U+FF0F fullwidth solidus */,
  '%E2%88%95' /* U+2215 division slash */,
  '%252F',
];
const DOTS = ['..', '.', '%2E%2E', '%2e%2e', '%2E', '.%2E', '%2E.', '%C0%AE%C0%AE' /* overlong UTF-8 dots */];
const CASES = ['TEAM-B', 'Team-b', 'team-B', '%74eam-b' /* an encoded letter: team-b itself */];

function hostileNames(): string[] {
  return [
    ...SLASHES.map((slash) => `team-b${slash}billing`),
    ...SLASHES.map((slash) => `..${slash}team-b${slash}billing`),
    ...CASES.map((variant) => `${variant}%2Fbilling`),
    ...DOTS,
    `ns%2Fteam-b%2Fworkflow%2Fbilling`,
    'billing%00',
  ];
}

/** What to try in a parameter, by its schema: what would name team-b's things if it were let through. */
function hostileValues(spec: ParameterSpec, t: Targets): string[] {
  const generic = [...DOTS, `..%2Fteam-b`, '%EF%BC%8F'];
  if (spec.schema === WorkflowName) return hostileNames();
  if (spec.schema === JobId)
    return [t.jobB, t.jobB.toUpperCase(), t.scheduledB, `${t.jobB}%2F..`, ...generic];
  if (spec.schema === StepName) return [`approve%2F..%2F..%2Fns%2Fteam-b`, 'approve%EF%BC%8F', ...generic];
  if (spec.schema === TokenId) return [t.tokenB, t.tokenB.toUpperCase(), ...generic];
  if (spec.schema === AssetPath)
    return ['..%2F..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fapi-handler.ts', ...generic];
  if (spec.schema === Vhost) return ['%01', 'x'.repeat(300)];
  if (spec.schema === NamespaceName) return [...CASES, 'team-b%2F..', ...generic];
  return generic;
}

/** A valid value for a parameter not being walked: the walker's own. */
function ownValue(name: string, route: Route, walker: Targets['walkers'][number]): string {
  if (name === 'id') return route.path.startsWith('/api/tokens') ? '0123456789abcdef' : walker.job;
  return { name: 'billing', step: 'approve', file: 'app.js' }[name] ?? 'x';
}

function bodyOf(route: Route): string {
  if (route.body?.kind === 'definition') return BILLING;
  if (route.path === '/api/tokens') return '{"namespace":"team-b","role":"read"}';
  return '{}';
}

/** Whether a path (before its query) has a segment that is `.` or `..`, percent-encoded or not. */
function hasDotSegment(path: string): boolean {
  return (path.split('?')[0] as string).split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}

interface Attempt {
  method: string;
  path: string;
  body: string;
  /**
   * Granting team-b is refused as such (403), whatever the grantor's namespace; so is every call of a
   * route only a token of every namespace may make (the operator's namespace settings).
   */
  forbiddenIsFine?: boolean;
  /** A free-text search filter (error text) is not a name: it may answer 200, finding nothing. */
  nothingFoundIsFine?: boolean;
}

/** Every hostile request of the walk for one walker. */
function walk(t: Targets, walker: Targets['walkers'][number]): Attempt[] {
  const attempts: Attempt[] = [];
  for (const route of routes) {
    const first = attempts.length;
    const inHome = (path: string) =>
      route.auth && route.namespaced ? `${walker.home}${path.slice('/api'.length)}` : path;
    const fill = (values: Record<string, string>) =>
      route.path.replace(
        /\{([^}+]+)\+?\}/g,
        (_, name: string) => values[name] ?? ownValue(name, route, walker),
      );
    const body = bodyOf(route);
    for (const [name, spec] of Object.entries(route.params)) {
      for (const value of hostileValues(spec, t))
        attempts.push({ method: route.method, path: inHome(fill({ [name]: value })), body });
    }
    for (const [name, spec] of Object.entries(route.query)) {
      const required = Object.entries(route.query)
        .filter(([other, s]) => s.required && other !== name)
        .map(([other]) => `&${other}=approve`)
        .join('');
      for (const value of hostileValues(spec, t)) {
        attempts.push({
          method: route.method,
          path: `${inHome(fill({}))}?${name}=${value}${required}`,
          body,
          nothingFoundIsFine: spec.schema === ErrorText,
        });
      }
    }
    // Beneath a namespace that is, or spells, or climbs to team-b; for a route no namespace scopes, any.
    const teamBValues = { name: 'billing', id: t.jobB, step: 'approve', file: 'app.js' };
    const rest = fill(teamBValues).slice('/api'.length);
    const required = Object.entries(route.query)
      .filter(([, s]) => s.required)
      .map(([name]) => `${name}=approve`)
      .join('&');
    const tail = required ? `${rest}?${required}` : rest;
    for (const namespace of ['team-b', ...CASES, 'team-b%2F..', '%2E%2E', `..%2Fteam-b`, 'team-b%EF%BC%8F']) {
      attempts.push({ method: route.method, path: `/api/ns/${namespace}${tail}`, body });
    }
    attempts.push({ method: route.method, path: `${walker.home}/..%2Fns%2Fteam-b${tail}`, body });
    attempts.push({ method: route.method, path: `${walker.home}/../ns/team-b${tail}`, body });
    attempts.push({ method: route.method, path: `${walker.home}/%2E%2E/ns/team-b${tail}`, body });
    if (route.body?.kind === 'json' && Object.hasOwn(route.body.fields, 'namespace')) {
      for (const namespace of ['team-b', 'TEAM-B', 'team-b/x', '*', '../team-b']) {
        attempts.push({
          method: route.method,
          path: route.path,
          body: JSON.stringify({ namespace, role: 'admin' }),
          forbiddenIsFine: true,
        });
      }
    }
    if (route.auth && route.everyNamespace) {
      for (const attempt of attempts.slice(first)) attempt.forbiddenIsFine = true;
    }
  }
  return attempts;
}

describe.each([
  ['the API handler in this process (SQLite)', inProcess],
  ["serve's HTTP server (RabbitMQ, SQLite)", onServe],
])('Walking every route towards another namespace, on %s', (_, start) => {
  let host: Host;
  let targets: Targets;
  beforeAll(async () => {
    host = await start();
    targets = await populate(host);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  for (const walker of [0, 1]) {
    it(`reaches nothing from ${walker === 0 ? 'a default admin token' : 'a team-a admin token'}: each answer 404 or 400, the store unchanged`, async () => {
      // Prepare
      const me = targets.walkers[walker] as Targets['walkers'][number];
      const before = await contents(host.dbPath);
      const attempts = walk(targets, me);
      // Dot segments reach the API as sent, on serve's server too: none may climb out of a namespace.
      expect(attempts.some((attempt) => hasDotSegment(attempt.path))).toBe(true);
      const wrong: string[] = [];
      // Act
      for (const attempt of attempts) {
        const response = await host.send(attempt.method, attempt.path, attempt.body, me.secret);
        const allowed = attempt.forbiddenIsFine ? [400, 403, 404] : [400, 404];
        const foundNothing =
          attempt.nothingFoundIsFine &&
          response.status === 200 &&
          /^\{"jobs":\[\]\}$|^\{"matched":0[,}]/.test(response.body);
        // The API handler in a process without streams (deployed, and this test's) cannot serve
        // GET /api/events at all: it answers 501 to everyone, which reaches nothing either.
        const cannotStream = response.status === 501 && /"code":"not_implemented"/.test(response.body);
        if (!allowed.includes(response.status) && !foundNothing && !cannotStream) {
          wrong.push(
            `${attempt.method} ${attempt.path} ${attempt.body.slice(0, 60)}: ${response.status} ${response.body.slice(0, 200)}`,
          );
        }
        if (response.body.includes('4111-team-b-secret'))
          wrong.push(`${attempt.method} ${attempt.path}: team-b's input leaked`);
        const problem = undocumented(attempt.method, attempt.path.split('?')[0] as string, {
          status: response.status,
          body: response.body,
        });
        if (problem && !problem.startsWith('no documented operation')) wrong.push(problem);
      }
      // Assess
      expect(attempts.length).toBeGreaterThan(routes.length * 10);
      expect(wrong).toEqual([]);
      expect(await contents(host.dbPath)).toBe(before);
    }, 180_000);
  }
});
