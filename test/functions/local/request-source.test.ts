import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeHandle, startServe } from '../../../functions/local/serve.js';
import { silentLogger } from '../../../functions/telemetry/telemetry.js';
import { workflowsFrom } from '../../support/simulated-world.js';

/**
 * serve answers only requests addressed to it by a name of its own (no DNS rebinding) and, when a
 * browser sends them, only from its own pages or the origins it was told to trust.
 */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, as fetch will not send a Host of the caller's choosing. */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: hostname,
        port,
        method,
        path,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const WORKFLOWS = 'workflows:\n  - name: one\n    steps:\n      - { name: wait, type: signal }\n';
const JSON_TYPE = { 'content-type': 'application/json' };

let serve: ServeHandle;
let host: string;
let own: string;

beforeAll(async () => {
  serve = await startServe({
    db: ':memory:',
    bus: 'memory',
    port: 0,
    logger: silentLogger,
    allowHosts: ['switchyard.test'],
    allowOrigins: ['https://switchyard.test'],
  });
  for (const workflow of workflowsFrom(WORKFLOWS)) await serve.manager.registerWorkflow(workflow);
  host = new URL(serve.url).host;
  own = `http://${host}`;
});

afterAll(async () => {
  await serve?.close();
});

// Its jobs wait for a signal: listed as waiting.
const jobCount = async () =>
  (
    JSON.parse((await send(serve.url, 'GET', '/api/jobs?status=waiting', { host })).body) as {
      jobs: string[];
    }
  ).jobs.length;
const port = () => new URL(serve.url).port;

describe('serve: the Host a request names', () => {
  it('is refused when it is not a name of this server (DNS rebinding): reads, starts and definition PUTs', async () => {
    const attacker = { host: `attacker.example:${port()}` };
    const before = await jobCount();
    const read = await send(serve.url, 'GET', '/api/workflows', attacker);
    expect(read.status).toBe(403);
    expect(JSON.parse(read.body).error.message).toMatch(/attacker\.example.*--allow-host/);
    expect((await send(serve.url, 'GET', '/', attacker)).status).toBe(403);
    const start = await send(serve.url, 'POST', '/api/workflow/one', { ...attacker, ...JSON_TYPE }, '{}');
    expect(start.status).toBe(403);
    const put = await send(
      serve.url,
      'PUT',
      '/api/workflow/taken',
      { ...attacker, ...JSON_TYPE },
      '{"workflows":[{"name":"taken","steps":[{"name":"a"}]}]}',
    );
    expect(put.status).toBe(403);
    expect(await jobCount()).toBe(before);
    expect((await send(serve.url, 'GET', '/api/workflow/taken/definition', { host })).status).toBe(404);
  });

  it('is refused when missing or malformed', async () => {
    for (const bad of [
      'local host',
      '[::1',
      'localhost@attacker.example',
      'attacker.example/x',
      'localhost:80:80',
    ]) {
      const answer = await send(serve.url, 'GET', '/api/workflows', { host: bad });
      expect([400, 403], `Host "${bad}" -> ${answer.status}`).toContain(answer.status);
    }
  });

  it('passes for loopback names and addresses, the bound address, and names given with --allow-host', async () => {
    for (const name of [
      'localhost',
      '127.0.0.1',
      '127.0.0.2',
      '[::1]',
      'LOCALHOST',
      'switchyard.test',
      'Switchyard.Test',
    ]) {
      for (const hostHeader of [name, `${name}:${port()}`]) {
        const answer = await send(serve.url, 'GET', '/api/workflows', { host: hostHeader });
        expect([hostHeader, answer.status]).toEqual([hostHeader, 200]);
      }
    }
  });

  it('is judged the same on every request, however many loopback names came before', async () => {
    const attacker = { host: `attacker.example:${port()}` };
    for (let n = 1; n <= 100; n++) {
      const loopback = await send(serve.url, 'GET', '/api/workflows', { host: `127.0.1.${n}:${port()}` });
      expect([n, loopback.status]).toEqual([n, 200]);
      if (n % 25 === 0) expect((await send(serve.url, 'GET', '/api/workflows', attacker)).status).toBe(403);
    }
    expect(
      (await send(serve.url, 'GET', '/api/workflows', { host: 'localhost@attacker.example' })).status,
    ).toBe(400);
    expect((await send(serve.url, 'GET', '/api/workflows', { host })).status).toBe(200);
  });
});

describe("serve: a browser's Origin", () => {
  it('is refused when another page sends it, even as JSON, and nothing starts', async () => {
    const before = await jobCount();
    for (const origin of [
      'http://attacker.example',
      'null',
      `http://localhost:${Number(port()) + 1}`,
      `https://${host}`,
    ]) {
      const answer = await send(
        serve.url,
        'POST',
        '/api/workflow/one',
        { host, origin, 'sec-fetch-site': 'cross-site', ...JSON_TYPE },
        '{}',
      );
      expect([origin, answer.status]).toEqual([origin, 403]);
      expect(JSON.parse(answer.body).error.message).toContain('--allow-origin');
    }
    expect(await jobCount()).toBe(before);
  });

  it("passes from the server's own pages, under each of its names, and from origins given with --allow-origin", async () => {
    const before = await jobCount();
    for (const [hostHeader, origin] of [
      [host, own],
      [`localhost:${port()}`, `http://localhost:${port()}`],
      ['switchyard.test', 'https://switchyard.test'],
    ] as const) {
      const answer = await send(
        serve.url,
        'POST',
        '/api/workflow/one',
        { host: hostHeader, origin, 'sec-fetch-site': 'same-origin', ...JSON_TYPE },
        '{}',
      );
      expect([origin, answer.status]).toEqual([origin, 201]);
    }
    expect(await jobCount()).toBe(before + 3);
  });

  it('without Origin, a cross-site fetch or embed (Sec-Fetch-Site) is refused, a link followed to the page is not', async () => {
    const embed = await send(serve.url, 'GET', '/api/jobs', {
      host,
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'no-cors',
    });
    expect(embed.status).toBe(403);
    const followed = await send(serve.url, 'GET', '/', {
      host,
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
    });
    expect(followed.status).toBe(200);
  });

  it('absent with no browser marker (curl -d, scripts): served as before', async () => {
    const before = await jobCount();
    const curl = await send(
      serve.url,
      'POST',
      '/api/workflow/one',
      { host, 'user-agent': 'curl/8.5.0', 'content-type': 'application/x-www-form-urlencoded' },
      '{"from":"curl"}',
    );
    expect(curl.status).toBe(201);
    expect(await jobCount()).toBe(before + 1);
  });

  it("refusals carry the security headers, as serve's other answers do", async () => {
    const refused = await send(serve.url, 'GET', '/api/jobs', { host: 'attacker.example' });
    expect(refused.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
  });
});

describe('serve: its allow lists', () => {
  it.each([
    [
      { allowOrigins: ['https://switchyard.test/app'] },
      /--allow-origin "https:\/\/switchyard.test\/app" is not an origin/,
    ],
    [{ allowOrigins: ['*'] }, /--allow-origin "\*" is not an origin/],
    [{ allowHosts: ['attacker.example:8080'] }, /--allow-host "attacker.example:8080" is not a host name/],
    [{ allowHosts: [''] }, /--allow-host "" is not a host name/],
  ])('refuses a malformed entry before it starts: %o', async (options, message) => {
    await expect(
      startServe({ db: ':memory:', bus: 'memory', port: 0, logger: silentLogger, ...options }),
    ).rejects.toThrow(message);
  });
});
