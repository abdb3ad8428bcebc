import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../../../functions/local/serve.js';
import { silentLogger } from '../../../functions/telemetry/telemetry.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-bind-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const options = (db: string) => ({
  db: join(dir, db),
  bus: 'memory' as const,
  port: 0,
  logger: silentLogger,
});

describe('serve on an address other machines can reach', () => {
  it.each(['0.0.0.0', '::'])(
    'refuses %s without a token, with one line saying why, and creates nothing',
    async (host) => {
      const db = `open-${host.replace(/\W/g, '')}.db`;
      const started = startServe({ ...options(db), host });
      await expect(started).rejects.toThrow(
        `refusing to serve on ${host} without a token: anyone who can reach it could start jobs and change workflows; set --token (or SWITCHYARD_TOKEN), or bind a loopback address such as 127.0.0.1`,
      );
      const error = await started.catch((failure: Error) => failure);
      expect((error as Error).message).not.toContain('\n');
      expect(existsSync(join(dir, db))).toBe(false);
    },
  );

  it('refuses an empty token as none', async () => {
    await expect(startServe({ ...options('empty.db'), host: '0.0.0.0', token: '' })).rejects.toThrow(
      /refusing to serve on 0\.0\.0\.0 without a token/,
    );
  });

  it("serves with a token, and answers a request naming one of the machine's addresses", async () => {
    const serve = await startServe({ ...options('token.db'), host: '0.0.0.0', token: 'secret' });
    try {
      const port = Number(new URL(serve.url).port);
      const address =
        Object.values(networkInterfaces())
          .flat()
          .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1';
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/api/workflows',
            headers: { host: `${address}:${port}`, authorization: 'Bearer secret' },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end();
      });
      expect(status).toBe(200);
    } finally {
      await serve.close();
    }
  });

  it.each(['127.0.0.1', 'localhost', '::1'])('needs no token on the loopback address %s', async (host) => {
    const serve = await startServe({ ...options(`loopback-${host.replace(/\W/g, '')}.db`), host });
    await serve.close();
  });
});
