import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { describeRun, runCli, spawnCli } from '../support/cli-process.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { addUser, closeConnectionsOfUser, deleteUser } from '../support/rabbitmq-admin.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { reportFigures } from '../support/soak.js';

const suffix = uniqueName('security');
const q = (name: string) => `${name}-${suffix}`;
/** The secret parts are random hex: if one shows up in a log, it came from the secret and nothing else. */
const passwordSecret = randomBytes(12).toString('hex');
const tokenSecret = randomBytes(12).toString('hex');
const USER = `switchyard-test-${suffix}`;
// A '/' in the password: the URL carries it percent-encoded, so both forms must stay out of the logs.
const PASSWORD = `pw/${passwordSecret}`;
const TOKEN = `tok-${tokenSecret}`;
const urlFor = (password: string, port = 5672) =>
  `amqp://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;

const WORKFLOWS = `workflows:
  - name: fan
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - { name: wait-here, type: signal }
  - name: undeliverable
    vhosts: [ switchyard-missing-${suffix} ]
    steps:
      - { name: bad }
`;

function expectNoSecrets(output: string, where: string): void {
  for (const secret of [passwordSecret, tokenSecret]) {
    const at = output.indexOf(secret);
    expect(at, `${where} logged a secret: …${output.slice(Math.max(0, at - 200), at + 50)}…`).toBe(-1);
  }
}

/** A TCP port nothing listens on (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('switchyard serve: credentials, secrets in logs, limits', { timeout: 120_000 }, () => {
  let dir: string;
  let serve: ServeProcess | undefined;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-security-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    await addUser(USER, PASSWORD);
  });

  afterAll(async () => {
    await serve?.kill('SIGKILL');
    await deleteUser(USER);
    await deleteQueues([q('replies')]);
    await rm(dir, { recursive: true, force: true });
    reportFigures('serve security', figures);
  });

  it('binds to 127.0.0.1, requires the token, enforces its limits, and never logs the broker password or the token', async () => {
    // Prepare: the broker URL (with its password) from the environment, the token from --token.
    serve = await spawnServe(
      [
        '--config',
        join(dir, 'workflows.yaml'),
        '--db',
        join(dir, 'switchyard.db'),
        '--reply-queue',
        q('replies'),
        '--max-fan-out',
        '3',
        '--max-body',
        '2048',
        '--token',
        TOKEN,
      ],
      { AMQP_URL: urlFor(PASSWORD), LOG_LEVEL: 'debug' },
    );
    const url = serve.url;
    const auth = { authorization: `Bearer ${TOKEN}` };
    const call = async (
      method: string,
      path: string,
      body?: string | ReadableStream<Uint8Array>,
      headers: Record<string, string> = auth,
    ) => {
      const response = await fetch(`${url}${path}`, { method, body, headers, duplex: 'half' } as RequestInit);
      const text = await response.text();
      return { status: response.status, text, json: () => JSON.parse(text) };
    };

    // Bound to the loopback interface only.
    expect(new URL(url).hostname).toBe('127.0.0.1');
    const port = Number(new URL(url).port);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    if (external) {
      const reachable = await new Promise<boolean>((resolve) => {
        const socket = connectTcp(port, external);
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      expect(reachable, `serve answers on ${external}:${port}`).toBe(false);
    }

    // The token: required everywhere but the dashboard page and the API description.
    expect((await call('GET', '/api/workflows', undefined, {})).status).toBe(401);
    expect((await call('GET', '/healthz', undefined, {})).status).toBe(401);
    expect((await call('GET', '/metrics', undefined, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await call('POST', '/api/workflow/fan', '{"items":[]}', {})).status).toBe(401);
    expect((await call('GET', '/api/workflows')).status).toBe(200);
    expect((await call('GET', '/openapi.json', undefined, {})).status).toBe(200);
    expect((await call('GET', '/', undefined, {})).status).toBe(200);

    // The body limit (--max-body 2048): declared, and streamed without a length.
    const big = JSON.stringify({ items: [], pad: 'x'.repeat(3000) });
    const declared = await call('POST', '/api/workflow/fan', big);
    expect([declared.status, declared.json().error.code]).toEqual([413, 'payload_too_large']);
    const streamed = await call(
      'POST',
      '/api/workflow/fan',
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      }),
    );
    expect([streamed.status, streamed.json().error.code]).toEqual([413, 'payload_too_large']);

    // The fan-out limit (--max-fan-out 3): a longer list fails the step with a clear error.
    const tooMany = (await call('POST', '/api/workflow/fan', '{"items":[1,2,3,4]}')).json().id as string;
    const atLimit = (await call('POST', '/api/workflow/fan', '{"items":[1,2,3]}')).json().id as string;
    const failed = await eventually('the over-long fan-out to fail', async () => {
      const document = (await call('GET', `/api/job/${tooMany}`)).json() as JobDocument;
      return document.status === 'failed' ? document : undefined;
    });
    expect(failed.error?.message).toBe(
      '"items" has 4 elements; a fan-out takes at most 3 (a setting of the manager)',
    );
    const running = (await call('GET', `/api/job/${atLimit}`)).json() as JobDocument;
    expect(running).toMatchObject({ status: 'running', steps: { each: { status: 'running', children: 3 } } });

    // Errors that get logged: an undeliverable request, malformed replies, a dropped broker connection.
    await call('POST', '/api/workflow/undeliverable', '{}');
    const { model, channel } = await openTestChannel();
    channel.sendToQueue(q('replies'), Buffer.from('not json'), { correlationId: 'garbage' });
    await channel.close();
    await model.close();
    const closed = await closeConnectionsOfUser(USER, 'closed by the security test');
    expect(closed).toBeGreaterThan(0);
    await eventually(
      'serve to log the lost connection and reconnect',
      () => /connection to .* lost/.test(serve?.output() ?? '') && /reconnected/.test(serve?.output() ?? ''),
    );
    expect((await call('GET', '/healthz')).status).toBe(200);

    // Act: stop it, so that its last words are in the output too.
    await serve.kill('SIGTERM');

    // Assess: it did log the broker URL, but only redacted, and neither secret anywhere.
    const output = serve.output();
    expect(output).toContain(`amqp://${USER}:***@127.0.0.1:5672`);
    expect(output).toMatch(/"level":"error"/);
    expectNoSecrets(output, 'serve');
    figures.logBytesChecked = output.length;
    figures.connectionsClosed = closed;
  });

  it('refuses --host 0.0.0.0 without a token: one line, a non-zero exit, no database created', async () => {
    const db = join(dir, 'open.db');
    const run = await runCli(
      ['serve', '--host', '0.0.0.0', '--port', '0', '--bus', 'memory', '--db', db],
      15_000,
      {
        SWITCHYARD_TOKEN: '',
      },
    );
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toBe(
      'switchyard: refusing to serve on 0.0.0.0 without a token: anyone who can reach it could start jobs and change workflows; set --token (or SWITCHYARD_TOKEN), or bind a loopback address such as 127.0.0.1\n',
    );
    expect(run.stdout).toBe('');
    expect(existsSync(db)).toBe(false);
  });

  it('never logs the password while the broker refuses it, nor while nothing listens', async () => {
    const port = await closedPort();
    for (const [what, amqpUrl] of [
      ['a wrong password', urlFor(`wrong/${passwordSecret}`)],
      ['a closed port', urlFor(PASSWORD, port)],
    ] as const) {
      const process = spawnCli(['serve', '--port', '0', '--db', ':memory:'], {
        AMQP_URL: amqpUrl,
        SWITCHYARD_TOKEN: TOKEN,
        LOG_LEVEL: 'debug',
      });
      try {
        // A refused login ends serve with one line; a closed port is retried.
        await eventually(
          `serve to report ${what} twice, or to exit`,
          () =>
            process.child.exitCode !== null ||
            (process.output().match(/cannot connect|setup .* failed|lost/g) ?? []).length >= 2,
          30_000,
        );
      } finally {
        await process.stop('SIGKILL');
      }
      expectNoSecrets(process.output(), `serve with ${what}`);
      expect(process.output()).toContain(':***@127.0.0.1');
      figures[`log lines with ${what}`] = process.output().trim().split('\n').length;
    }
  });

  it('started before its broker, serves once the broker appears, without a restart', async () => {
    // Prepare: serve points at a port where nothing listens yet.
    const port = await closedPort();
    const process = spawnCli(
      ['serve', '--port', '0', '--db', ':memory:', '--config', join(dir, 'workflows.yaml')],
      {
        AMQP_URL: urlFor(PASSWORD, port),
      },
    );
    let proxy: Server | undefined;
    try {
      await eventually('serve to retry the broker', () => /cannot connect/.test(process.output()), 15_000);

      // Act: the broker "comes up" on that port (a TCP forwarder to the real one).
      proxy = await forward(port, 5672);

      // Assess
      const url = await eventually(
        'serve to start serving',
        () => /"message":"serving".*"url":"([^"]+)"/.exec(process.output())?.[1],
        30_000,
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await process.stop('SIGKILL');
      await new Promise((resolve) => proxy?.close(resolve) ?? resolve(undefined));
    }
  });

  it('answers /healthz with 503 while the broker is unreachable, instead of not serving at all', async () => {
    const port = await closedPort();
    const process = spawnCli(['serve', '--port', '0', '--db', ':memory:'], {
      AMQP_URL: urlFor(PASSWORD, port),
    });
    try {
      const url = await eventually(
        'serve to start serving without its broker',
        () => /"message":"serving".*"url":"([^"]+)"/.exec(process.output())?.[1],
        8_000,
      ).catch(() => {
        throw new Error(
          `serve did not start its API within 8 s while the broker was unreachable (no /healthz to ask); it logged:\n${process.output().slice(0, 400)}`,
        );
      });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(503);
    } finally {
      await process.stop('SIGKILL');
    }
  });
});

/** Listens on `port` and forwards every connection to 127.0.0.1:`target`: a broker appearing late. */
function forward(port: number, target: number): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connectTcp(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  const close = server.close.bind(server);
  server.close = (callback?: (error?: Error) => void) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
