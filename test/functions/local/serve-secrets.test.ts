import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryWorkerTransport } from '../../../functions/adapters/memory/bus.js';
import { type ServeHandle, startServe } from '../../../functions/local/serve.js';
import { createJsonLogger } from '../../../functions/telemetry/json-logger.js';
import { createWorker, type Worker } from '../../../functions/worker/index.js';

const SECRET = 'sk_live_7f3a9c1e-never-stored';
const FROM_ENV = 'env-secret-41c2-never-stored';

const WORKFLOWS = `workflows:
  - name: pay
    params:
      region: eu
    steps:
      - name: charge
        params:
          auth: { apiKey: { secret: payments/api-key } }
          webhook: { secret: webhook-token }
      - name: audit
        depends: [ charge ]
        params:
          token: { secret: not-set-anywhere }
`;

describe('serve: secrets named in params are resolved only as a request is sent', { timeout: 60_000 }, () => {
  let dir: string;
  let serve: ServeHandle;
  let worker: Worker;
  const received: Record<string, unknown>[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-secrets-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ 'payments/api-key': SECRET }));
    process.env.TEST_SECRET_WEBHOOK_TOKEN = FROM_ENV;
    serve = await startServe({
      configFiles: [join(dir, 'workflows.yaml')],
      db: join(dir, 'switchyard.db'),
      bus: 'memory',
      port: 0,
      secretsFile: join(dir, 'secrets.json'),
      secretsEnvPrefix: 'TEST_SECRET_',
      logger: createJsonLogger({ level: 'debug', write: (line) => logs.push(line) }),
    });
    const broker = serve.broker;
    if (!broker) throw new Error('no in-memory broker');
    worker = createWorker({
      queue: 'charge',
      transport: new MemoryWorkerTransport(broker),
      logger: { info() {}, warn() {}, error() {} },
      handler: (input) => {
        received.push(input);
        return { charged: true };
      },
    });
    await worker.start();
  });

  afterAll(async () => {
    delete process.env.TEST_SECRET_WEBHOOK_TOKEN;
    await worker?.stop();
    await serve?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (input: Record<string, unknown>) => {
    const response = await fetch(`${serve.url}/api/workflow/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return ((await response.json()) as { id: string }).id;
  };
  const job = async (id: string) =>
    (await (await fetch(`${serve.url}/api/job/${id}`)).json()) as {
      status: string;
      steps: Record<string, { status: string; attempts: { error?: string }[]; input?: unknown }>;
    };

  it('gives the worker the values, and keeps them out of the SQLite files, the job document and the log', async () => {
    const id = await start({ order: 'o-1' });
    await expect.poll(async () => (await job(id)).steps.audit?.status, { timeout: 15_000 }).toBe('failed');

    // The worker got the values, where params put them.
    expect(received[0]).toMatchObject({
      order: 'o-1',
      region: 'eu',
      auth: { apiKey: SECRET },
      webhook: FROM_ENV,
    });
    // A secret set nowhere: the attempt fails, naming it, and nothing is sent.
    const audit = (await job(id)).steps.audit;
    expect(audit?.attempts.at(-1)?.error).toBe('not sent: secret "not-set-anywhere" is not set');

    // Nowhere else: the job document (which shows the reference), every file of the database, the log.
    const document = JSON.stringify(await job(id));
    expect(document).toContain('"secret":"payments/api-key"');
    for (const value of [SECRET, FROM_ENV]) {
      expect(document).not.toContain(value);
      for (const file of (await readdir(dir)).filter((name) => name.startsWith('switchyard.db'))) {
        expect((await readFile(join(dir, file))).includes(value), `${file} holds a secret`).toBe(false);
      }
      expect(logs.join('\n')).not.toContain(value);
    }
  });

  it('never lets an input name another secret: a key the input sets keeps the input’s value', async () => {
    received.length = 0;
    const id = await start({
      webhook: { secret: 'payments/api-key' },
      auth: { apiKey: { secret: 'payments/api-key' } },
    });
    await expect
      .poll(async () => (await job(id)).steps.charge?.status, { timeout: 15_000 })
      .toBe('completed');
    // `webhook` is declared as secret webhook-token: the input's reference to another secret is sent as it is.
    expect(received[0]?.webhook).toEqual({ secret: 'payments/api-key' });
    // An input that repeats the declared reference at its path gets what the author declared there.
    expect(received[0]?.auth).toEqual({ apiKey: SECRET });
  });
});
