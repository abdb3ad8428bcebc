import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { type NackingWorker, startNackingWorker } from '../support/nacking-worker.js';
import { startPlainWorkers } from '../support/original-worker.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';

/**
 * Issue 18 #1: the original's Python worker NACKs with requeue whenever its handler throws, and a
 * classic queue with no delivery limit hands the request back for ever (thousands of times a
 * second). Requests now expire (at the attempt's deadline, and at most after the request TTL); the
 * manager sends again only what a step still waits for; quorum step queues count deliveries.
 */
const suffix = uniqueName('nack');
const q = (name: string) => `${name}-${suffix}`;
const TTL_MS = 1000;

const WORKFLOWS = `workflows:
  - name: timed
    steps:
      - { name: t, queue: ${q('t')}, timeout: 1s }
  - name: untimed
    steps:
      - { name: u, queue: ${q('u')} }
  - name: cancelled
    steps:
      - { name: c, queue: ${q('c')} }
  - name: late-worker
    steps:
      - { name: l, queue: ${q('l')} }
`;

const QUORUM_WORKFLOWS = `workflows:
  - name: counted
    steps:
      - { name: k, queue: ${q('k')}, retries: 1 }
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until no delivery has come for `quietMs`; returns when the last one came. */
async function quiet(worker: NackingWorker, quietMs: number, timeoutMs: number): Promise<number> {
  return eventually(
    `deliveries to stop for ${quietMs} ms`,
    () => worker.count > 0 && Date.now() - worker.lastAt >= quietMs && worker.lastAt,
    timeoutMs,
  );
}

describe('Requests that workers keep rejecting (serve on RabbitMQ and SQLite)', { timeout: 60_000 }, () => {
  let serve: TestServe;
  const workers: { stop(): Promise<void> }[] = [];

  const start = async (on: TestServe, workflow: string, input: object = {}) => {
    const response = await on.api<{ id: string }>('POST', `/api/workflow/${workflow}`, JSON.stringify(input));
    expect(response.status).toBe(201);
    return response.body.id;
  };
  const documentOf = async (on: TestServe, id: string) =>
    (await on.api<JobDocument>('GET', `/api/job/${id}`)).body;
  const ended = (on: TestServe, id: string, timeoutMs = 20_000) =>
    eventually(
      `job ${id} to end`,
      async () => {
        const document = await documentOf(on, id);
        return document.status === 'running' ? undefined : document;
      },
      timeoutMs,
    );

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS, { requestTtlMs: TTL_MS });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await serve?.stop();
    await deleteQueues([
      ...['t', 'u', 'c', 'l', 'k'].map(q),
      ...(serve ? [serve.replyQueue, `${serve.replyQueue}.dead-letters`] : []),
    ]);
  });

  it('a step with a timeout: the job fails at the deadline and the request stops circulating with it', async () => {
    const worker = await startNackingWorker(q('t'));
    workers.push(worker);
    const id = await start(serve, 'timed');
    const document = await ended(serve, id);
    expect(document.status).toBe('failed');
    expect(document.error?.message).toMatch(/no reply within 1s/);
    const endedAt = Date.now();
    // The request expired at the attempt's deadline: nothing comes after the job failed.
    const lastAt = await quiet(worker, 1000, 5000);
    expect(lastAt).toBeLessThan(endedAt + 200);
    const total = worker.count;
    await sleep(500);
    expect(worker.count).toBe(total);
    expect(total).toBeGreaterThan(10); // it did loop while the step waited
  });

  it('a step without a timeout: each copy circulates at most the request TTL, and a good worker replacing the bad one completes the job', async () => {
    const bad = await startNackingWorker(q('u'));
    const id = await start(serve, 'untimed', { n: 1 });
    // The request is sent again as the same attempt each time its copy expires.
    await eventually(
      'the expired copy to be sent again',
      () => (serve.handle.manager.refresher?.resent ?? 0) >= 1,
    );
    expect([...bad.attempts]).toEqual([1]);
    expect((await documentOf(serve, id)).status).toBe('running');
    await bad.stop();
    const good = await startPlainWorkers({ [q('u')]: (input) => ({ ...input, done: true }) });
    workers.push(good);
    const document = await ended(serve, id, 2 * TTL_MS + 5000);
    expect(document).toMatchObject({ status: 'completed', result: { n: 1, done: true } });
    // Exactly one copy was left to deliver: no pile of duplicates from the re-sends.
    expect(good.deliveries.get(`${id}:u`)).toBe(1);
  });

  it('cancel: the request stops being delivered within the request TTL', async () => {
    const worker = await startNackingWorker(q('c'));
    workers.push(worker);
    const id = await start(serve, 'cancelled');
    await eventually('the first delivery', () => worker.count > 0);
    expect((await serve.api('DELETE', `/api/job/${id}`)).status).toBe(200);
    const cancelledAt = Date.now();
    const lastAt = await quiet(worker, 1000, TTL_MS + 5000);
    // A copy delivered just before it expired may reach a busy worker a little later.
    expect(lastAt - cancelledAt).toBeLessThan(TTL_MS + 1_000);
  });

  it('a request sent before any worker exists is still delivered when one starts after the TTL', async () => {
    const id = await start(serve, 'late-worker', { early: true });
    await sleep(2.5 * TTL_MS);
    const worker = await startPlainWorkers({ [q('l')]: (input) => ({ ...input, late: true }) });
    workers.push(worker);
    const document = await ended(serve, id, 2 * TTL_MS + 5000);
    expect(document).toMatchObject({ status: 'completed', result: { early: true, late: true } });
  });

  it('quorum step queues: the broker counts deliveries; after 5 the attempt fails "rejected by the worker 5 times", and is retried per retries', async () => {
    const quorum = await startTestServe(QUORUM_WORKFLOWS, { quorumQueues: true, requestTtlMs: 60_000 });
    try {
      // The manager declared the queue when it registered the workflow: a quorum queue.
      const { model, channel } = await openTestChannel();
      await channel
        .assertQueue(q('k'), { durable: true })
        .then(() => expect.fail('a declaration with no arguments should be refused'))
        .catch((error: { code?: number }) => expect(error.code).toBe(406));
      await model.close();
      const worker = await startNackingWorker(q('k'), { declare: false });
      workers.push(worker);
      const id = await start(quorum, 'counted');
      const document = await ended(quorum, id);
      expect(document.status).toBe('failed');
      expect(document.error).toMatchObject({ attempt: 2 });
      expect(document.error?.message).toMatch(/^rejected by the worker 5 times/);
      expect(worker.count).toBe(10); // 5 deliveries of each of the 2 attempts
      expect([...worker.attempts]).toEqual([1, 2]);
    } finally {
      await quorum.stop();
      await deleteQueues([quorum.replyQueue, `${quorum.replyQueue}.dead-letters`]);
    }
  });
});
