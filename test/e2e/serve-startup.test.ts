import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/original-worker.js';
import { AMQP_URL, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const BIN = join(import.meta.dirname, '../../bin/switchyard.js');
const NOBODY = 'amqp://guest:guest@127.0.0.1:1';

/** Runs serve until it exits by itself (or `timeoutMs`, then SIGKILL): its exit code and output. */
function runUntilExit(args: string[], timeoutMs = 20_000): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** A TCP proxy to the test broker that drops every connection until `up` is set. */
async function brokerProxy(): Promise<{ url: string; up: boolean; close(): Promise<void> }> {
  const target = new URL(AMQP_URL);
  const sockets = new Set<Socket>();
  const state = { up: false };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (!state.up) return client.destroy();
    const upstream = netConnect(Number(target.port || 5672), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `amqp://${target.username}:${target.password}@127.0.0.1:${port}`,
    get up() {
      return state.up;
    },
    set up(value: boolean) {
      state.up = value;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The lines serve wrote to stderr that are not JSON log lines. */
const plainLines = (output: string) => output.split('\n').filter((line) => line.startsWith('switchyard:'));

describe('serve start-up and shutdown in every broker state', { timeout: 120_000 }, () => {
  let dir: string;
  let config: string;
  const workflows = Array.from({ length: 3 }, (_, n) => `flow${n}`);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-startup-'));
    config = join(dir, 'workflows.yaml');
    await writeFile(
      config,
      `workflows:\n${workflows
        .map((name) => `  - name: ${name}\n    steps:\n      - name: s\n        queue: ${uniqueName(name)}\n`)
        .join('')}`,
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTP at once with the broker down, names it in /healthz, ends on SIGTERM', async () => {
    const started = Date.now();
    const serve = await spawnServe(
      ['--db', join(dir, 'down.db'), '--config', config, '--amqp', NOBODY, '--reply-queue', uniqueName('r')],
      {},
      20_000,
    );
    try {
      // Before: 10 s per workflow in --config (3 here) before HTTP came up, 30 s in all. The bounds
      // leave room for a CI machine whose both cores are busy (4.8 s to serve was seen there).
      expect(Date.now() - started).toBeLessThan(20_000);
      const asked = Date.now();
      const health = await fetch(`${serve.url}/healthz`);
      expect(Date.now() - asked).toBeLessThan(5_000);
      expect(health.status).toBe(503);
      const body = (await health.json()) as { store: string; bus: string };
      expect(body.store).toBe('ok');
      expect(body.bus).toMatch(/RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1 is not reachable/);
      const stopping = Date.now();
      const code = await serve.kill('SIGTERM');
      expect(Date.now() - stopping).toBeLessThan(8_000);
      expect(code).toBe(0);
    } finally {
      await serve.kill('SIGKILL');
    }
  });

  it("bounds V8's young generation in the process it was started as, unless the caller sized it", async () => {
    const flagsOf = async (pid: number | undefined) =>
      (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((arg) => arg.startsWith('--'));
    const start = (name: string, env: NodeJS.ProcessEnv = {}) =>
      spawnServe(['--db', join(dir, name), '--amqp', NOBODY, '--reply-queue', uniqueName('r')], env, 15_000);

    const bounded = await start('bounded.db');
    try {
      expect(await flagsOf(bounded.child.pid)).toContain('--max-semi-space-size=16');
      expect(await bounded.kill('SIGTERM')).toBe(0);
    } finally {
      await bounded.kill('SIGKILL');
    }

    const chosen = await start('chosen.db', { NODE_OPTIONS: '--max-semi-space-size=32' });
    try {
      expect((await flagsOf(chosen.child.pid)).some((flag) => flag.startsWith('--max-semi-space-size'))).toBe(
        false,
      );
      expect((await fetch(`${chosen.url}/healthz`)).status).toBe(503);
    } finally {
      await chosen.kill('SIGKILL');
    }
  });

  it('stores a job started while the broker is down and sends its request once the broker is up', async () => {
    const proxy = await brokerProxy();
    const queue = uniqueName('later');
    const file = join(dir, 'later.yaml');
    await writeFile(
      file,
      `workflows:\n  - name: later\n    steps:\n      - name: s\n        queue: ${queue}\n`,
    );
    const serve = await spawnServe(
      [
        '--db',
        join(dir, 'later.db'),
        '--config',
        file,
        '--amqp',
        proxy.url,
        '--reply-queue',
        uniqueName('r'),
      ],
      {},
      8_000,
    );
    const inspector = await connect(AMQP_URL);
    try {
      const job = await fetch(`${serve.url}/api/workflow/later`, { method: 'POST', body: '{"n":7}' });
      expect(job.status).toBe(201);
      const { id } = (await job.json()) as { id: string };
      proxy.up = true;
      const request = await eventually(async () => {
        // A channel each time: asking for a queue not declared yet closes the channel.
        const channel = await inspector.createChannel();
        channel.on('error', () => {});
        const message = await channel.get(queue, { noAck: true }).catch(() => false as const);
        await channel.close().catch(() => {});
        return message || false;
      }, 20_000);
      expect(JSON.parse(request.content.toString())).toEqual({ n: 7 });
      expect(String(request.properties.correlationId)).toContain(id);
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
      const stopping = Date.now();
      expect(await serve.kill('SIGTERM')).toBe(0);
      expect(Date.now() - stopping).toBeLessThan(8_000);
    } finally {
      await serve.kill('SIGKILL');
      await inspector.close().catch(() => {});
      await proxy.close();
    }
  });

  it('refuses a port in use with one line and exit 1', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, output } = await runUntilExit([
        '--port',
        String(port),
        '--db',
        join(dir, 'port.db'),
        '--amqp',
        NOBODY,
      ]);
      expect(code).toBe(1);
      expect(plainLines(output)).toHaveLength(1);
      expect(plainLines(output)[0]).toMatch(/EADDRINUSE|in use/);
    } finally {
      blocker.close();
    }
  });

  it('exits non-zero with one clear line on a wrong password', async () => {
    const url = AMQP_URL.replace('guest:guest', 'guest:wrong');
    const { code, output } = await runUntilExit(['--port', '0', '--db', join(dir, 'pw.db'), '--amqp', url]);
    expect(code).toBe(1);
    expect(plainLines(output)).toHaveLength(1);
    expect(plainLines(output)[0]).toMatch(/refused the login/);
    expect(output).not.toContain('wrong');
  });

  it('exits non-zero with one clear line on a vhost that does not exist', async () => {
    const url = `${AMQP_URL.replace(/\/$/, '')}/${uniqueName('novhost')}`;
    const { code, output } = await runUntilExit(['--port', '0', '--db', join(dir, 'vh.db'), '--amqp', url]);
    expect(code).toBe(1);
    expect(plainLines(output)).toHaveLength(1);
    expect(plainLines(output)[0]).toMatch(/refused the vhost/);
  });

  describe('two serves on one reply queue', () => {
    const replyQueue = uniqueName('shared-replies');
    let first: ServeProcess;

    afterAll(async () => {
      await first?.kill('SIGTERM');
    });

    it('the second exits with one line naming the queue; the first keeps it', async () => {
      first = await spawnServe(['--db', join(dir, 'a.db'), '--amqp', AMQP_URL, '--reply-queue', replyQueue]);
      const { code, output } = await runUntilExit([
        '--port',
        '0',
        '--db',
        join(dir, 'b.db'),
        '--amqp',
        AMQP_URL,
        '--reply-queue',
        replyQueue,
      ]);
      expect(code).toBe(1);
      expect(plainLines(output)).toHaveLength(1);
      expect(plainLines(output)[0]).toContain(replyQueue);
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    });

    it('a serve killed with SIGKILL restarts and takes its queue again at once', async () => {
      await first.kill('SIGKILL');
      const started = Date.now();
      first = await spawnServe(['--db', join(dir, 'a.db'), '--amqp', AMQP_URL, '--reply-queue', replyQueue]);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(first.child.exitCode).toBeNull();
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(20_000);
    });
  });
});
