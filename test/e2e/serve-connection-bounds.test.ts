import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Flood, flood } from '../support/connection-flood.js';
import { eventually } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const WORKFLOWS = `workflows:
  - name: held
    steps:
      - { name: wait-for-a-worker, queue: nobody-listens }
`;

/** serve's JSON log lines with this message. */
function logged(serve: ServeProcess, message: string): Record<string, unknown>[] {
  return serve
    .output()
    .split('\n')
    .filter((line) => line.includes(message))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    })
    .filter((entry) => typeof entry.message === 'string' && entry.message.startsWith(message));
}

/** The status of `GET url/healthz`, or the error that stopped it. */
async function healthz(url: string): Promise<number | string> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    await response.text();
    return response.status;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

/**
 * serve's HTTP server under connection floods (serve a process, on the in-memory bus): idle and
 * slowloris connections end at the timeouts, a long poll outlives them, connections over the cap are
 * closed at once while the health listener answers, and SIGTERM ends serve with the flood on.
 */
describe('serve: connection floods', { timeout: 180_000 }, () => {
  let dir: string;
  let serve: ServeProcess | undefined;
  const floods: Flood[] = [];
  const start = (args: string[], options?: { maxOpenFiles?: number }) =>
    spawnServe(['--bus', 'memory', '--db', join(dir, `${Math.random()}.db`), ...args], {}, 30_000, options);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-connection-bounds-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
  });

  afterEach(async () => {
    for (const opened of floods.splice(0)) opened.release();
    await serve?.kill('SIGKILL');
    serve = undefined;
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Waits for serve to close every connection of each flood, naming the one it did not. */
  async function closedByServe(floodsByName: Record<string, Flood>): Promise<void> {
    // serve looks for connections past their timeouts every 500 ms here; node:http alone, every 30 s.
    for (const [name, opened] of Object.entries(floodsByName)) {
      await eventually(
        `serve to close every ${name} connection`,
        () => opened.closedByServer() === opened.sockets.length,
        20_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}: ${opened.open()} of ${opened.sockets.length} still open`);
      });
    }
  }

  it('closes 5,000 idle connections and slowloris ones at the headers timeout, kept-alive ones at the keep-alive timeout', async () => {
    // Prepare: a request timeout longer than the test, so the headers timeout alone can close them.
    serve = await start([
      '--max-connections',
      '6000',
      '--headers-timeout',
      '1s',
      '--request-timeout',
      '25s',
      '--keep-alive-timeout',
      '500ms',
    ]);
    const { url } = serve;

    // Act
    const slowloris = await flood(url, 20, 'slowloris');
    const keptAlive = await flood(url, 10, 'kept-alive');
    const idle = await flood(url, 5_000, 'idle');
    floods.push(slowloris, keptAlive, idle);
    const healthDuringFlood = await healthz(url);

    // Assess
    expect(healthDuringFlood).toBe(200);
    await closedByServe({ slowloris, keptAlive, idle });
    for (const entry of slowloris.sockets) expect(entry.received).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    for (const entry of keptAlive.sockets) expect(entry.received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(await healthz(url)).toBe(200);
  });

  it('closes requests whose body trickles at the request timeout, while a long poll longer than every timeout is answered', async () => {
    // Prepare
    serve = await start([
      '--config',
      join(dir, 'workflows.yaml'),
      '--headers-timeout',
      '1s',
      '--request-timeout',
      '2s',
      '--keep-alive-timeout',
      '500ms',
    ]);
    const { url } = serve;
    const started = await fetch(`${url}/api/workflow/held`, { method: 'POST', body: '{}' });
    const { id } = (await started.json()) as { id: string };

    // Act: a long poll of 3 s while requests trickle their bodies.
    const longPoll = fetch(`${url}/api/job/${id}?wait=3`).then(async (response) => ({
      status: response.status,
      job: (await response.json()) as { status: string },
    }));
    const slowBodies = await flood(url, 10, 'slow-body');
    floods.push(slowBodies);

    // Assess
    await closedByServe({ slowBodies });
    for (const entry of slowBodies.sockets) expect(entry.received).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    await expect(longPoll).resolves.toEqual({
      status: 200,
      job: expect.objectContaining({ status: 'running' }),
    });
  });

  it('closes connections over --max-connections at once; the health listener answers; serve is back to normal after', async () => {
    // Prepare: timeouts far longer than the test, so the flood holds its connections.
    serve = await start([
      '--max-connections',
      '100',
      '--headers-timeout',
      '60s',
      '--request-timeout',
      '60s',
      '--health-port',
      '0',
    ]);
    const { url } = serve;
    const healthUrl = String(logged(serve, 'serving')[0]?.health).replace(/\/healthz$/, '');

    // Act
    const slowloris = await flood(url, 20, 'slowloris');
    const idle = await flood(url, 1_000, 'idle');
    floods.push(slowloris, idle);

    // Assess: 100 held, the other 900 closed by serve, and only the health listener answers.
    await eventually(
      `100 connections held (${slowloris.open() + idle.open()} open)`,
      () => idle.closedByServer() === 920 && slowloris.open() === 20 && idle.open() === 80,
    );
    expect(await healthz(healthUrl)).toBe(200);
    expect(await healthz(url)).toMatch(/^failed/);
    expect(slowloris.open() + idle.open()).toBe(100);
    await eventually(
      'the refusals logged',
      () => logged(serve as ServeProcess, 'HTTP connections refused')[0],
    );
    expect(logged(serve, 'HTTP connections refused')[0]).toMatchObject({
      level: 'warn',
      maxConnections: 100,
    });
    // The health listener answers /healthz only.
    expect((await fetch(`${healthUrl}/api/workflows`)).status).toBe(404);

    // Act: the flood lets go of half of what it held.
    idle.release(50);

    // Assess
    await eventually('the API port to answer again', async () => (await healthz(url)) === 200);
  });

  it('ends on SIGTERM with the flood on, though slowloris connections are inside their headers timeout', async () => {
    // Prepare
    serve = await start(['--max-connections', '200', '--headers-timeout', '60s', '--request-timeout', '60s']);
    const slowloris = await flood(serve.url, 50, 'slowloris');
    const idle = await flood(serve.url, 1_000, 'idle');
    floods.push(slowloris, idle);
    await eventually('the flood held', () => slowloris.open() === 50 && idle.open() === 150);

    // Act
    const exited = serve.kill('SIGTERM');

    // Assess: serve gives the requests in hand 2 s, then closes them: well before their 60 s.
    const code = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000)),
    ]);
    expect(code, serve.output().slice(-2000)).toBe(0);
  });

  it('reports the descriptor limit at start, and warns when --max-connections could exceed it', async () => {
    serve = await start(['--max-connections', '1000'], { maxOpenFiles: 512 });

    expect(logged(serve, 'file descriptors')[0]).toMatchObject({
      level: 'info',
      limit: 512,
      connections: 1000,
    });
    expect(logged(serve, 'serve may need')[0]).toMatchObject({
      level: 'warn',
      limit: 512,
      connections: 1000,
    });
    expect(logged(serve, 'serve may need')[0]?.message).toContain(
      'raise the limit (ulimit -n) or lower --max-connections',
    );
  });

  it('does not warn when the limit leaves room for --max-connections', async () => {
    serve = await start(['--max-connections', '100'], { maxOpenFiles: 512 });

    expect(logged(serve, 'file descriptors')[0]).toMatchObject({ limit: 512, connections: 100 });
    expect(logged(serve, 'serve may need')).toEqual([]);
  });
});
