import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { deleteQueues, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { spawnServe } from '../support/serve-process.js';

const suffix = uniqueName('full');
const q = (name: string) => `${name}-${suffix}`;
const JOBS = 10;

const WORKFLOWS = `workflows:
  - name: pair
    steps:
      - name: healthy
        queue: ${q('healthy')}
      - name: crowded
        queue: ${q('full')}
`;

/** The step queue `crowded` uses, declared by "its operator": one message at most, publishes refused beyond. */
async function declareFullQueue(channel: Channel, queue: string): Promise<void> {
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
  });
  channel.sendToQueue(queue, Buffer.from('{}'), { correlationId: 'filler' });
  await eventually(async () => (await channel.checkQueue(queue)).messageCount === 1);
}

/**
 * A worker for the full queue, written here: the plain workers declare their queue without
 * arguments, which the broker refuses for this one. Counts deliveries per correlation id.
 */
async function consumeFullQueue(channel: Channel, queue: string): Promise<Map<string, number>> {
  const deliveries = new Map<string, number>();
  await channel.consume(queue, (message) => {
    if (!message) return;
    const correlationId = String(message.properties.correlationId);
    deliveries.set(correlationId, (deliveries.get(correlationId) ?? 0) + 1);
    if (message.properties.replyTo) {
      channel.sendToQueue(message.properties.replyTo as string, Buffer.from('{"crowded":true}'), {
        correlationId,
      });
    }
    channel.ack(message);
  });
  return deliveries;
}

describe('A full step queue (x-max-length, reject-publish) beside a healthy one', {
  timeout: 120_000,
}, () => {
  let inspector: { model: ChannelModel; channel: Channel };
  let serve: TestServe | undefined;
  let workers: PlainWorkers | undefined;

  beforeAll(async () => {
    inspector = await openTestChannel();
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
    await inspector.model.close().catch(() => {});
    await deleteQueues([q('healthy'), q('full'), ...(serve ? [serve.replyQueue] : [])]);
  });

  it('delivers each request to the healthy queue once, and the full queue its requests once it has room', async () => {
    // Prepare
    await declareFullQueue(inspector.channel, q('full'));
    serve = await startTestServe(WORKFLOWS, { connectionName: `switchyard-serve-${suffix}` });
    workers = await startPlainWorkers({ [q('healthy')]: () => ({ healthy: true }) });

    // Act: jobs start while the full queue refuses every request.
    const ids: string[] = [];
    for (let n = 0; n < JOBS; n++) {
      ids.push(
        (await serve.api<{ id: string }>('POST', '/api/workflow/pair', JSON.stringify({ n }))).body.id,
      );
    }
    await eventually(() => workers?.deliveries.size === JOBS);
    // Long enough for the old pump to have re-sent the whole batch a few times.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // Assess: the healthy queue got each request once, though the full queue still refuses.
    expect([...(workers?.deliveries.values() ?? [])]).toEqual(Array(JOBS).fill(1));
    const running = await serve.api<JobDocument>('GET', `/api/job/${ids[0]}`);
    expect(running.body.status).toBe('running');

    // Act: the full queue's worker starts, making room.
    const crowded = await consumeFullQueue(inspector.channel, q('full'));

    // Assess: every job completes; the full queue got each request once.
    await eventually(
      async () => {
        for (const id of ids) {
          if ((await serve?.api<JobDocument>('GET', `/api/job/${id}`))?.body.status !== 'completed')
            return false;
        }
        return true;
      },
      60_000,
      250,
    );
    crowded.delete('filler');
    expect(crowded.size).toBe(JOBS);
    expect([...crowded.values()]).toEqual(Array(JOBS).fill(1));
    expect([...(workers?.deliveries.values() ?? [])]).toEqual(Array(JOBS).fill(1));
  });

  it('serve stops on SIGTERM within a bound while a queue stays full and its request unsent', async () => {
    // Prepare: a serve process whose only step queue is full and stays so.
    const queue = q('full-sigterm');
    await declareFullQueue(inspector.channel, queue);
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-full-queue-'));
    try {
      const config = join(dir, 'workflows.yaml');
      await writeFile(
        config,
        `workflows:\n  - name: one\n    steps:\n      - name: crowded\n        queue: ${queue}\n`,
      );
      const serveProcess = await spawnServe([
        '--config',
        config,
        '--db',
        join(dir, 'switchyard.db'),
        '--reply-queue',
        q('replies'),
      ]);
      try {
        const started = await fetch(`${serveProcess.url}/api/workflow/one`, { method: 'POST', body: '{}' });
        expect(started.status).toBe(201);
        await eventually(
          () => /the broker refused requests|outbox work failed/.test(serveProcess.output()),
          20_000,
        );

        // Act
        const signalled = Date.now();
        const code = await Promise.race([
          serveProcess.kill('SIGTERM'),
          new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000)),
        ]);
        const stoppedInMs = Date.now() - signalled;

        // Assess: a clean exit within the drain deadline (5 s) and a little closing.
        expect(code, serveProcess.output().slice(-3000)).toBe(0);
        expect(stoppedInMs).toBeLessThan(10_000);
        expect(serveProcess.output()).toContain('outbox not drained before the deadline');
      } finally {
        await serveProcess.kill('SIGKILL');
      }
    } finally {
      await deleteQueues([queue, q('replies')]);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
