import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../../engine/index.js';
import { startServe } from '../../../functions/local/serve.js';
import { createJsonLogger } from '../../../functions/telemetry/json-logger.js';
import { describeRun, runCli } from '../../support/cli-process.js';
import { startTestServe, type TestServe } from '../../support/local-serve.js';
import { AMQP_URL } from '../../support/rabbitmq.js';
import { documentedVerifier, startReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

// On the real RabbitMQ and a real SQLite file, with a real HTTP receiver (docs/notifications.md).

const SECRET = 'whsec_5e1f-serve-never-stores-this';

const workflow = (name: string, url: string, events = '[step.waiting, job.completed, job.cancelled]') => `
  - name: ${name}
    notify:
      url: ${url}
      events: ${events}
      secret: HOOK_KEY
    steps:
      - name: approve
        type: signal
`;

interface DeliveryView {
  id: string;
  type: string;
  state: string;
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  posting?: boolean;
  nextAttemptAt?: string;
  body: Record<string, unknown>;
}

describe('serve: webhooks for job events (notify:)', { timeout: 90_000 }, () => {
  let secretsDir: string;
  let hooks: WebhookReceiver;
  let hanging: WebhookReceiver;
  let failing: WebhookReceiver;
  let serve: TestServe;
  const logs: string[] = [];

  beforeAll(async () => {
    secretsDir = await mkdtemp(join(tmpdir(), 'switchyard-hooks-'));
    await writeFile(join(secretsDir, 'secrets.json'), JSON.stringify({ HOOK_KEY: SECRET }));
    hooks = await startReceiver({ status: 204 });
    hanging = await startReceiver('hang');
    failing = await startReceiver({ status: 500 });
    serve = await startTestServe(
      `workflows:${workflow('approval', hooks.url)}${workflow('slow-receiver', hanging.url)}${workflow('failing-receiver', failing.url, '[job.completed]')}`,
      {
        secretsFile: join(secretsDir, 'secrets.json'),
        logger: createJsonLogger({ level: 'debug', write: (line) => logs.push(line) }),
      },
    );
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await Promise.all([hooks, hanging, failing].map((receiver) => receiver?.close()));
    await rm(secretsDir, { recursive: true, force: true });
  });

  const start = async (workflow: string) =>
    (await serve.api<{ id: string }>('POST', `/api/workflow/${workflow}`, '{}')).body.id;
  const signal = (id: string) => serve.api<{ status: string }>('POST', `/api/job/${id}/signal/approve`, '{}');
  const deliveries = async (id: string) =>
    (await serve.api<{ deliveries: DeliveryView[] }>('GET', `/api/job/${id}/deliveries`)).body.deliveries;

  it("posts the job's events, signed so that the documented code verifies them, and logs each as delivered", async () => {
    const id = await start('approval');
    const [waiting] = await hooks.received(1);
    expect(JSON.parse(waiting?.body ?? '')).toMatchObject({
      type: 'step.waiting',
      jobId: id,
      step: 'approve',
    });
    expect((await signal(id)).status).toBe(200);
    const posts = await hooks.received(2);
    const completed = JSON.parse(posts[1]?.body ?? '');
    expect(completed).toMatchObject({
      type: 'job.completed',
      namespace: 'default',
      jobId: id,
      workflow: 'approval',
      version: 1,
      status: 'completed',
      result: {},
    });
    const verify = await documentedVerifier();
    for (const post of posts) {
      expect(verify(post.headers['switchyard-signature'], post.body, SECRET)).toBe(true);
      expect(post.headers['switchyard-delivery']).toBe(JSON.parse(post.body).id);
    }
    await expect
      .poll(async () => (await deliveries(id)).map((d) => [d.type, d.state, d.attempts, d.lastStatus]))
      .toEqual([
        ['step.waiting', 'delivered', 1, 204],
        ['job.completed', 'delivered', 1, 204],
      ]);

    const metrics = await serve.api<string>('GET', '/metrics');
    expect(metrics.body).toMatch(/^switchyard_webhook_deliveries_total\{outcome="delivered"\} [1-9]\d*$/m);

    // The secret's value is in no job document, delivery log, database file or log line.
    const shown = JSON.stringify([(await serve.api('GET', `/api/job/${id}`)).body, await deliveries(id)]);
    expect(shown).toContain('HOOK_KEY');
    expect(shown).not.toContain(SECRET);
    for (const file of (await readdir(serve.dir)).filter((name) => name.startsWith('switchyard.db')))
      expect((await readFile(join(serve.dir, file))).includes(SECRET), `${file} holds the secret`).toBe(
        false,
      );
    expect(logs.join('\n')).not.toContain(SECRET);
  });

  it('never slows a job: it completes while the receiver holds the post unanswered', async () => {
    const id = await start('slow-receiver');
    await hanging.received(1);
    expect((await signal(id)).status).toBe(200);
    expect((await serve.api<{ status: string }>('GET', `/api/job/${id}`)).body.status).toBe('completed');
    // The first post is still held; the job's end is recorded, waiting its turn.
    const logged = await deliveries(id);
    expect(logged.map((d) => d.type)).toEqual(['step.waiting', 'job.completed']);
    expect(logged[0]).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('retries a receiver that answers 500 later, lists what died, and redelivers it on request', async () => {
    const id = await start('failing-receiver');
    await signal(id);
    await failing.received(1);
    await expect
      .poll(async () => (await deliveries(id))[0])
      .toMatchObject({ state: 'pending', attempts: 1, lastStatus: 500, lastError: 'HTTP 500' });
    const [pending] = await deliveries(id);
    expect(Date.parse(pending?.nextAttemptAt ?? '') - Date.now()).toBeGreaterThan(10_000);

    // Dead after its last attempt (the attempts are made long apart: here the log is moved on).
    const stored = (await serve.handle.store.getDelivery(pending?.id ?? '')) as Delivery;
    await serve.handle.store.updateDelivery({ ...stored, state: 'dead', attempts: 8, rev: stored.rev + 1 });
    const dead = await serve.api<{ deliveries: DeliveryView[] }>('GET', '/api/deliveries?state=dead');
    expect(dead.body.deliveries.map((d) => d.id)).toContain(pending?.id);
    expect(failing.posts).toHaveLength(1);

    failing.mode = { status: 200 };
    const redelivered = await serve.api<DeliveryView>('POST', `/api/deliveries/${pending?.id}/redeliver`);
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toMatchObject({ state: 'pending', attempts: 0 });
    await failing.received(2);
    await expect
      .poll(async () => (await deliveries(id))[0])
      .toMatchObject({ state: 'delivered', attempts: 1 });
    expect(failing.posts[1]?.headers['switchyard-delivery']).toBe(pending?.id);
    const audit = await serve.api<{ entries: { action: string; target: string }[] }>('GET', '/api/audit');
    expect(audit.body.entries[0]).toMatchObject({ action: 'delivery.redelivered', target: pending?.id });
  });

  it('switchyard deliveries: a job’s deliveries, the dead letters, a redelivery; -o json', async () => {
    const cli = (args: string[]) =>
      runCli([...args, '--url', serve.url], 30_000, { NO_COLOR: '', FORCE_COLOR: '' });
    const id = await start('approval');
    await signal(id);
    await expect
      .poll(async () => (await deliveries(id)).map((d) => d.state))
      .toEqual(['delivered', 'delivered']);
    const table = await cli(['deliveries', id]);
    expect(table.code, describeRun(table)).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^DELIVERY\s+EVENT\s+STATE\s+TRIES\s+HTTP\s+DETAIL\s+URL$/);
    expect(rows[0]).toMatch(/step\.waiting\s+delivered\s+1\s+204\s+http:/);
    expect(rows[1]).toMatch(/job\.completed\s+delivered\s+1\s+204\s+http:/);

    const [first] = await deliveries(id);
    const stored = (await serve.handle.store.getDelivery(first?.id ?? '')) as Delivery;
    await serve.handle.store.updateDelivery({ ...stored, state: 'dead', rev: stored.rev + 1 });
    const dead = JSON.parse((await cli(['deliveries', '--dead', '-o', 'json'])).stdout) as {
      deliveries: { id: string; jobId: string }[];
    };
    expect(dead.deliveries.map((d) => d.id)).toContain(first?.id);
    const redelivered = await cli(['deliveries', '--redeliver', first?.id ?? '']);
    expect(redelivered.code, describeRun(redelivered)).toBe(0);
    expect(redelivered.stdout).toMatch(/pending/);
    await expect.poll(async () => (await deliveries(id))[0]?.state).toBe('delivered');
    expect((await cli(['deliveries'])).stderr).toContain('name a job id, or --dead, or --redeliver');
  });

  it('refuses at PUT, changing nothing, a URL that is not one, an unknown event, a secret not set', async () => {
    const cases: [string, string][] = [
      [
        workflow('bad', 'ftp://hooks.example.com/x'),
        '"url" "ftp://hooks.example.com/x" must use http or https',
      ],
      [
        workflow('bad', 'https://hooks.example.com/x', '[job.complete]'),
        'unknown event "job.complete" (did you mean "job.completed"?)',
      ],
      [
        workflow('bad', 'https://hooks.example.com/x').replace('HOOK_KEY', 'NOT_SET'),
        '"notify": secret "NOT_SET" is not set',
      ],
    ];
    for (const [yaml, message] of cases) {
      const response = await serve.api<{ error: { message: string } }>(
        'PUT',
        '/api/workflow/bad',
        `workflows:${yaml}`,
      );
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain(message);
      expect((await serve.api('GET', '/api/workflow/bad')).status).toBe(404);
    }
  });

  it('refuses to start with a default target whose secret is not set, naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-hooks-'));
    try {
      await expect(
        startServe({
          db: join(dir, 'switchyard.db'),
          amqpUrl: AMQP_URL,
          port: 0,
          secretsFile: join(secretsDir, 'secrets.json'),
          notify: { url: hooks.url, events: ['job.completed'], secret: 'MISSING' },
          logger: createJsonLogger({ write: () => {} }),
        }),
      ).rejects.toThrow('"notify": secret "MISSING" is not set');
      await expect(
        startServe({
          db: join(dir, 'switchyard.db'),
          amqpUrl: AMQP_URL,
          port: 0,
          notify: { url: hooks.url, events: ['job.done'], secret: 'HOOK_KEY' },
          logger: createJsonLogger({ write: () => {} }),
        }),
      ).rejects.toThrow('--notify-events: unknown event "job.done"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
