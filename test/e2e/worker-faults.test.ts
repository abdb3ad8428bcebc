import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { createWorker, type Worker, WorkerError } from '../../functions/worker/index.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { metricValue } from '../support/metrics-text.js';
import { PlainReply, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';
import { reply, type ScriptedWorkers, startScriptedWorkers } from '../support/scripted-workers.js';
import { type SdkWorkerProcess, spawnSdkWorker } from '../support/sdk-worker-process.js';
import { reportFigures } from '../support/soak.js';

const suffix = uniqueName('worker-faults');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: killed
    steps:
      - { name: hold, queue: ${q('hold')} }
  - name: silent
    steps:
      - { name: mute, queue: ${q('mute')}, timeout: 1s, retries: 2 }
  - name: throws
    steps:
      - { name: boom, queue: ${q('boom')}, retries: 1 }
  - name: refused
    steps:
      - { name: refuse, queue: ${q('refuse')}, retries: 3 }
  - name: refused-by-original
    steps:
      - { name: legacy, queue: ${q('legacy')}, retries: 3 }
  - name: twice
    steps:
      - { name: double, queue: ${q('double')} }
      - { name: next, queue: ${q('next')}, depends: [ double ] }
`;

const figures: Record<string, unknown> = {};

describe('Worker faults (serve on RabbitMQ and SQLite)', { timeout: 90_000 }, () => {
  let serve: TestServe;
  let scripted: ScriptedWorkers;
  let original: PlainWorkers;
  const processes: SdkWorkerProcess[] = [];
  const inProcess: Worker[] = [];

  const start = async (workflow: string, input: object = {}) => {
    const response = await serve.api<{ id: string }>(
      'POST',
      `/api/workflow/${workflow}`,
      JSON.stringify(input),
    );
    expect(response.status).toBe(201);
    return response.body.id;
  };
  const ended = (id: string, timeoutMs = 30_000) =>
    eventually(
      `job ${id} to end`,
      async () => {
        const document = (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
        return document.status === 'running' ? undefined : document;
      },
      timeoutMs,
    );

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    scripted = await startScriptedWorkers(
      {
        // Takes every request and never answers.
        [q('mute')]: () => [],
        // Answers every request twice, differently.
        [q('double')]: ({ input }) => [
          reply({ ...input, answer: 'first' }),
          reply({ ...input, answer: 'second' }),
        ],
        [q('next')]: ({ input }) => [reply({ ...input, next: true })],
      },
      { connectionName: `switchyard-test-${suffix}` },
    );
    original = await startPlainWorkers(
      {
        // A worker of the original's style, on plain amqplib, that adds the header by hand, as a string.
        [q('legacy')]: () =>
          new PlainReply(
            { error: 'account closed' },
            { type: 'error', headers: { 'x-retryable': 'false' }, contentType: 'application/json' },
          ),
      },
      { connectionName: `switchyard-test-original-${suffix}` },
    );
  });

  afterAll(async () => {
    for (const worker of processes) await worker.kill();
    for (const worker of inProcess) await worker.stop();
    await scripted?.stop();
    await original?.stop();
    await serve?.stop();
    await deleteQueues([
      ...['hold', 'mute', 'boom', 'refuse', 'legacy', 'double', 'next'].map(q),
      ...(serve ? [serve.replyQueue] : []),
    ]);
  });

  it('a worker killed with SIGKILL while it holds a request: the broker hands the request to another, the job completes', async () => {
    // Prepare: an SDK worker in its own process that takes the request and never answers.
    const first = await spawnSdkWorker(q('hold'), 'hold');
    processes.push(first);
    const id = await start('killed', { n: 7 });
    const taken = await first.waitFor('the request to reach the first worker', (e) => e.event === 'received');

    // Act
    await first.kill('SIGKILL');
    const second = await spawnSdkWorker(q('hold'), 'echo');
    processes.push(second);

    // Assess: the same request (same attempt) reached the second worker, which answered it.
    const redelivered = await second.waitFor('the redelivered request', (e) => e.event === 'received');
    expect(redelivered).toEqual(taken);
    const document = await ended(id);
    expect(document).toMatchObject({ status: 'completed', result: { n: 7, handledBy: second.child.pid } });
    expect(document.steps.hold).toMatchObject({ status: 'completed', attempt: 1 });
    figures.killedWorker = {
      redeliveredAttempt: redelivered.attempt,
      attempts: document.steps.hold?.attempt,
    };
  });

  it('a worker that never replies: each attempt times out, the retries run, then the job fails with a clear error', async () => {
    const id = await start('silent');
    const document = await ended(id);
    expect(document.status).toBe('failed');
    expect(document.error).toMatchObject({
      step: 'mute',
      attempt: 3,
      message: 'no reply within 1s (attempt 3)',
    });
    const seen = scripted.deliveries.filter((d) => d.correlationId === `${id}:mute`).map((d) => d.attempt);
    expect(seen).toEqual([1, 2, 3]);
    const metrics = (await serve.api<string>('GET', '/metrics')).body;
    expect(metricValue(metrics, 'switchyard_timeouts_total')).toBe(3);
    figures.silentWorker = { attempts: seen, error: document.error?.message };
  });

  it('a worker whose handler throws: the SDK retries a bounded number of times, then replies with an error', async () => {
    // Prepare: an SDK worker whose handler always throws; it answers with an error after 3 deliveries.
    const deliveries: number[] = [];
    const worker = createWorker({
      queue: q('boom'),
      amqpUrl: AMQP_URL,
      maxDeliveries: 3,
      logger: { info() {}, warn() {}, error() {} },
      handler: (_, context) => {
        deliveries.push(context.attempt);
        throw new Error('boom');
      },
    });
    inProcess.push(worker);
    await worker.start();

    // Act
    const id = await start('throws');
    const document = await ended(id);

    // Assess: 3 deliveries per attempt, 2 attempts (retries: 1), then the job failed with the SDK's error.
    expect(document.status).toBe('failed');
    expect(document.error).toMatchObject({ step: 'boom', attempt: 2, message: 'boom (failed 3 times)' });
    expect(deliveries).toEqual([1, 1, 1, 2, 2, 2]);
    figures.throwingWorker = { deliveries, error: document.error?.message };
  });

  it('an SDK worker that throws WorkerError with retryable: false: the step fails at once, whatever its retries; a plain WorkerError is retried', async () => {
    // Prepare: one SDK worker; the input says whether its WorkerError may be retried.
    const attempts = new Map<string, number[]>();
    const worker = createWorker({
      queue: q('refuse'),
      amqpUrl: AMQP_URL,
      logger: { info() {}, warn() {}, error() {} },
      handler: (input, context) => {
        attempts.set(context.jobId, [...(attempts.get(context.jobId) ?? []), context.attempt]);
        throw new WorkerError(String(input.why), { retryable: input.retryable !== false });
      },
    });
    inProcess.push(worker);
    await worker.start();

    // Act
    const refused = await start('refused', { why: 'invoice 7 does not exist', retryable: false });
    const retried = await start('refused', { why: 'the bank is busy' });
    const [refusedDocument, retriedDocument] = await Promise.all([ended(refused), ended(retried)]);

    // Assess: one attempt for the non-retryable error, all four for the other.
    expect(refusedDocument.status).toBe('failed');
    expect(refusedDocument.error).toMatchObject({
      step: 'refuse',
      attempt: 1,
      message: 'invoice 7 does not exist',
    });
    expect(refusedDocument.steps.refuse).toMatchObject({ status: 'failed', attempt: 1 });
    expect(attempts.get(refused)).toEqual([1]);
    expect(retriedDocument.error).toMatchObject({ step: 'refuse', attempt: 4, message: 'the bank is busy' });
    expect(attempts.get(retried)).toEqual([1, 2, 3, 4]);
    figures.nonRetryableWorkerError = {
      attempts: attempts.get(refused),
      retryableAttempts: attempts.get(retried),
    };
  });

  it('an original-style worker that sends x-retryable: "false" by hand: the step fails at once', async () => {
    const id = await start('refused-by-original');
    const document = await ended(id);
    expect(document.status).toBe('failed');
    expect(document.error).toMatchObject({ step: 'legacy', attempt: 1, message: 'account closed' });
    expect(document.steps.legacy).toMatchObject({ status: 'failed', attempt: 1 });
    expect(original.deliveries.get(`${id}:legacy`)).toBe(1);
  });

  it('a worker that replies twice: the first reply completes the step, the second is ignored, the next step runs once', async () => {
    const ignoredBefore = metricValue(
      (await serve.api<string>('GET', '/metrics')).body,
      'switchyard_replies_ignored_total',
      {
        reason: 'not_awaited',
      },
    );
    const id = await start('twice', { n: 1 });
    const document = await ended(id);
    expect(document).toMatchObject({ status: 'completed', result: { n: 1, answer: 'first', next: true } });
    expect(document.steps.double).toMatchObject({ attempt: 1 });
    expect(scripted.deliveries.filter((d) => d.correlationId === `${id}:next`)).toHaveLength(1);
    await eventually('the second reply to be counted as ignored', async () => {
      const metrics = (await serve.api<string>('GET', '/metrics')).body;
      return (
        metricValue(metrics, 'switchyard_replies_ignored_total', { reason: 'not_awaited' }) ===
        ignoredBefore + 1
      );
    });
    figures.doubleReply = { result: document.result, nextDeliveries: 1 };
    reportFigures('worker faults', figures);
  });
});
