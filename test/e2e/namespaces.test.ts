import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { runCli } from '../support/cli-process.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

// Two namespaces, each with a workflow named billing, on one serve (RabbitMQ and SQLite): each runs
// on its own queues (queue prefixes), is seen only by its own tokens, and is driven by the CLI.

const ROOT = `root-${uniqueName('token')}`;
const prefixA = `${uniqueName('ns-a')}.`;
const prefixB = `${uniqueName('ns-b')}.`;
const BILLING = `workflows:
  - name: billing
    steps:
      - name: charge
      - name: receipt
        depends: [charge]
`;

describe('Namespaces end to end (serve on RabbitMQ and SQLite, the CLI)', { timeout: 90_000 }, () => {
  let dir: string;
  let serve: ServeProcess;
  let workers: PlainWorkers;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli([...args, '--url', serve.url], 30_000, { SWITCHYARD_TOKEN: ROOT, NO_COLOR: '1', ...env });
  const api = async (method: string, path: string, token: string, body?: string) => {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-namespaces-'));
    // team-a by the flags; team-b by the file's own keys.
    await writeFile(join(dir, 'team-a.yaml'), BILLING);
    await writeFile(join(dir, 'team-b.yaml'), `namespace: team-b\nqueuePrefix: ${prefixB}\n${BILLING}`);
    workers = await startPlainWorkers({
      [`${prefixA}charge`]: (input) => ({ ...input, chargedBy: 'team-a' }),
      [`${prefixA}receipt`]: (input) => ({ ...input, receiptBy: 'team-a' }),
      [`${prefixB}charge`]: (input) => ({ ...input, chargedBy: 'team-b' }),
      [`${prefixB}receipt`]: (input) => ({ ...input, receiptBy: 'team-b' }),
    });
    serve = await spawnServe([
      '--config',
      join(dir, 'team-a.yaml'),
      join(dir, 'team-b.yaml'),
      '--namespace',
      'team-a',
      '--queue-prefix',
      prefixA,
      '--db',
      join(dir, 'switchyard.db'),
      '--token',
      ROOT,
      '--log-format',
      'json',
    ]);
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs billing separately in each namespace, on its own queues, and keeps each token to its own', async () => {
    // Prepare: a run token of each namespace, made with the CLI; the secret alone on stdout.
    const created = await cli([
      'token',
      'create',
      '--namespace',
      'team-a',
      '--role',
      'run',
      '--description',
      'a',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const tokenA = created.stdout.trim();
    const tokenB = (await cli(['token', 'create', '-n', 'team-b', '--role', 'run'])).stdout.trim();
    expect(tokenA).toMatch(/^swy_/);

    // Act: a job in each, through the CLI, each with its namespace's token.
    const runA = await cli(['submit', 'billing', '--input', '{"n":1}', '--wait', '-n', 'team-a'], {
      SWITCHYARD_TOKEN: tokenA,
    });
    const runB = await cli(['submit', 'billing', '--input', '{"n":2}', '--wait'], {
      SWITCHYARD_TOKEN: tokenB,
      SWITCHYARD_NAMESPACE: 'team-b',
    });

    // Assess: each ran on its own namespace's workers.
    expect(runA.code, runA.stderr).toBe(0);
    expect(JSON.parse(runA.stdout)).toEqual({ n: 1, chargedBy: 'team-a', receiptBy: 'team-a' });
    expect(runB.code, runB.stderr).toBe(0);
    expect(JSON.parse(runB.stdout)).toEqual({ n: 2, chargedBy: 'team-b', receiptBy: 'team-b' });
    const jobsA = await api('GET', '/api/ns/team-a/jobs?status=completed', tokenA);
    const jobsB = await api('GET', '/api/ns/team-b/jobs?status=completed', tokenB);
    const [idA] = jobsA.body.jobs as string[];
    const [idB] = jobsB.body.jobs as string[];
    expect([jobsA.body.jobs, jobsB.body.jobs].map((ids) => (ids as string[]).length)).toEqual([1, 1]);
    // Nothing in default; each token finds nothing of the other namespace.
    expect((await api('GET', '/api/workflows', ROOT)).body).toEqual([]);
    expect((await api('GET', `/api/ns/team-b/job/${idB}`, tokenA)).status).toBe(404);
    expect((await api('GET', `/api/ns/team-a/job/${idB}`, tokenA)).status).toBe(404);
    expect((await api('GET', `/api/ns/team-a/job/${idA}`, tokenB)).status).toBe(404);
    const document = (await api('GET', `/api/ns/team-a/job/${idA}`, tokenA)).body as unknown as JobDocument;
    expect(document).toMatchObject({ workflow: 'billing', namespace: 'team-a', status: 'completed' });
    // A run token cannot register a workflow.
    expect((await api('PUT', '/api/ns/team-a/workflow/billing', tokenA, BILLING)).status).toBe(403);
    // The CLI lists each namespace's workflows.
    const listed = await cli(['workflows', '-o', 'json', '-n', 'team-b']);
    expect(JSON.parse(listed.stdout).map((w: { name: string }) => w.name)).toEqual(['billing']);
    // The queue prefixes are what the broker holds.
    const queues = await api('GET', '/api/ns/team-b/queues', ROOT);
    expect((queues.body.queues as { queue: string }[]).map((q) => q.queue).sort()).toEqual([
      `${prefixB}charge`,
      `${prefixB}receipt`,
    ]);

    // A revoked token is refused at once.
    const list = await cli(['token', 'list', '-o', 'json']);
    const idOfA = (JSON.parse(list.stdout) as { id: string; description: string }[]).find(
      (token) => token.description === 'a',
    )?.id;
    expect(list.stdout).not.toContain(tokenA);
    const revoked = await cli(['token', 'revoke', idOfA as string]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await api('GET', '/api/ns/team-a/jobs', tokenA)).status).toBe(401);

    // Secrets never reach the log.
    await eventually(() => serve.output().includes('job started'));
    expect(serve.output()).not.toContain(tokenA);
    expect(serve.output()).not.toContain(tokenB);
    expect(serve.output()).not.toContain(ROOT);
  });

  it('keeps each namespace to its own queues and vhosts: only the operator sets them, no crossing registers', async () => {
    const adminA = (await cli(['token', 'create', '-n', 'team-a', '--role', 'admin'])).stdout.trim();
    const adminDefault = (await cli(['token', 'create', '-n', 'default', '--role', 'admin'])).stdout.trim();
    const before = (await api('GET', '/api/namespaces', ROOT)).body;
    expect(before.settings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ namespace: 'team-a', queuePrefix: prefixA }),
        expect.objectContaining({ namespace: 'team-b', queuePrefix: prefixB }),
      ]),
    );

    // A namespace admin cannot change its prefix nor its vhosts: the operator's settings.
    const grab = await cli(['namespace', 'set', 'team-a', '--queue-prefix', prefixB], {
      SWITCHYARD_TOKEN: adminA,
    });
    expect([grab.code, grab.stderr]).toEqual([1, expect.stringMatching(/needs a token of "\*"/)]);
    // Nor state another's prefix in a document, nor send to another's queue from default.
    const stated = await api(
      'PUT',
      '/api/ns/team-a/workflow/steal',
      adminA,
      `queuePrefix: ${prefixB}\n${BILLING.replace('billing', 'steal')}`,
    );
    expect(stated.status).toBe(400);
    const crossing = `workflows:\n  - name: steal\n    steps:\n      - name: charge\n        queue: ${prefixB}charge\n`;
    const fromDefault = await api('PUT', '/api/workflow/steal', adminDefault, crossing);
    expect([fromDefault.status, (fromDefault.body.error as { message: string }).message]).toEqual([
      400,
      expect.stringContaining(`the queue prefix of another namespace`),
    ]);
    // Nor run on a vhost the operator did not allow: serve never connects there.
    const vhost = uniqueName('vhost');
    const onVhost = await api(
      'PUT',
      '/api/ns/team-a/workflow/elsewhere',
      adminA,
      `workflows:\n  - name: elsewhere\n    vhosts: [${vhost}]\n    steps:\n      - name: charge\n`,
    );
    expect([onVhost.status, (onVhost.body.error as { message: string }).message]).toEqual([
      400,
      expect.stringContaining(`vhost "${vhost}" is not allowed in namespace "team-a"`),
    ]);
    const startOn = await api('POST', `/api/ns/team-a/workflow/billing?vhost=${vhost}`, adminA, '{}');
    expect(startOn.status).toBe(400);
    expect(serve.output()).not.toContain(vhost);

    // Nothing registered, and team-a's queue listing holds its own queues only.
    expect((await api('GET', '/api/workflows', ROOT)).body).toEqual([]);
    const queuesA = (await api('GET', '/api/ns/team-a/queues', adminA)).body.queues as { queue: string }[];
    expect(queuesA.map((q) => q.queue).every((queue) => queue.startsWith(prefixA))).toBe(true);
    expect((await api('GET', '/api/namespaces', ROOT)).body).toEqual(before);

    // The operator (the root) sets a new namespace's prefix with the CLI, and the CLI shows it.
    const prefixC = `${uniqueName('ns-c')}.`;
    const set = await cli(['namespace', 'set', 'team-c', '--queue-prefix', prefixC]);
    expect([set.code, set.stdout.trim()]).toEqual([
      0,
      `namespace team-c: queue prefix "${prefixC}"; the broker URL's vhost only`,
    ]);
    const listed = await cli(['namespaces', '-o', 'json']);
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ namespace: 'team-c', queuePrefix: prefixC }),
    );
  });

  it('refuses a bad namespace or role with a clear message and creates nothing', async () => {
    const bad = await cli(['token', 'create', '--namespace', 'a/b', '--role', 'read']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/namespace "a\/b" holds a "\/"/);
    const role = await cli(['token', 'create', '--namespace', 'team-a', '--role', 'owner']);
    expect(role.code).toBe(1);
    expect(role.stderr).toMatch(/"role" must be one of read, run, admin/);
    const list = await cli(['token', 'list', '-o', 'json']);
    expect((JSON.parse(list.stdout) as { role: string }[]).map((token) => token.role)).not.toContain('owner');
  });
});
