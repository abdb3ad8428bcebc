import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const suffix = uniqueName('queue-names');
const q = (name: string) => `${name}-${suffix}`;
const MISSING_VHOST = `switchyard-missing-${suffix}`;

const WORKFLOWS = `workflows:
  - name: elsewhere
    vhosts: [ ${MISSING_VHOST} ]
    steps:
      - { name: far, queue: ${q('far')} }
  - name: here
    steps:
      - { name: near, queue: ${q('near')} }
`;

describe('serve: queues and vhosts the broker refuses', { timeout: 60_000 }, () => {
  let dir: string;
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-queue-names-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
  });

  afterAll(async () => {
    await serve?.kill('SIGKILL');
    await deleteQueues([q('replies'), q('near'), q('far'), q('late')]);
    await rm(dir, { recursive: true, force: true });
  });

  it('fails the jobs of a vhost the broker refuses, stops logging in to it, keeps dispatching, and stops on SIGTERM', async () => {
    // Prepare
    serve = await spawnServe([
      '--config',
      join(dir, 'workflows.yaml'),
      '--db',
      join(dir, 'switchyard.db'),
      '--reply-queue',
      q('replies'),
    ]);
    const call = async (method: string, path: string, body?: string) => {
      const response = await fetch(`${serve?.url}${path}`, { method, body });
      const text = await response.text();
      return { status: response.status, json: () => JSON.parse(text) };
    };

    // Act
    const far = (await call('POST', '/api/workflow/elsewhere', '{}')).json().id as string;
    const failed = await eventually('the job on the refused vhost to fail', async () => {
      const document = (await call('GET', `/api/job/${far}`)).json() as JobDocument;
      return document.status === 'failed' ? document : undefined;
    });
    const near = (await call('POST', '/api/workflow/here', '{}')).json().id as string;

    // Assess: a clear error; the other workflow's request still goes out.
    expect(failed.error?.message).toContain(`RabbitMQ refused the vhost "${MISSING_VHOST}"`);
    const { model, channel } = await openTestChannel();
    try {
      const message = await eventually('the request of the other workflow', async () => {
        await channel.assertQueue(q('near'), { durable: true });
        return (await channel.get(q('near'), { noAck: true })) || undefined;
      });
      expect(message.properties.correlationId).toBe(`${near}:near`);
    } finally {
      await model.close();
    }
    const logins = () =>
      serve
        ?.output()
        .split('\n')
        .filter((line) => line.includes(MISSING_VHOST)).length ?? 0;
    const before = logins();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(logins(), serve.output()).toBe(before);

    // The definitions themselves: refused before anything reaches the broker.
    const put = (queue: string) =>
      call('PUT', '/api/workflow/late', JSON.stringify({ name: 'late', steps: [{ name: 'a', queue }] }));
    const accented = await put('é'.repeat(200));
    const reply = await put(q('replies'));
    expect([accented.status, accented.json().error.message]).toEqual([
      400,
      expect.stringContaining('400 bytes'),
    ]);
    expect([reply.status, reply.json().error.message]).toEqual([
      400,
      expect.stringContaining("is the manager's reply queue"),
    ]);
    expect((await put(q('late'))).status).toBe(201);

    const started = Date.now();
    const code = await serve.kill('SIGTERM');
    expect({ code, fast: Date.now() - started < 10_000 }).toEqual({ code: 0, fast: true });
  });
});
