import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';
import { brokerListening, startBroker, stopBroker } from '../support/rabbitmq-admin.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { reportFigures, scaled } from '../support/soak.js';

const RESTARTS = scaled(3, 3, 'BROKER_RESTARTS');
const JOBS_PER_WAVE = 60;
const suffix = uniqueName('restart');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: diamond
    steps:
      - { name: s1, queue: ${q('s1')} }
      - { name: s2, queue: ${q('s2')}, depends: [ s1 ] }
      - { name: s3, queue: ${q('s3')}, depends: [ s1 ] }
      - { name: s4, queue: ${q('s4')}, depends: [ s2, s3 ] }
  - name: fan
    steps:
      - { name: each, task: per-item }
      - { name: total, queue: ${q('total')}, depends: [ each ] }
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - { name: double, queue: ${q('double')} }
`;

const num = (value: unknown) => value as number;
const HANDLERS: Record<string, (input: Record<string, unknown>) => Record<string, unknown>> = {
  s1: (input) => ({ ...input, s1: num(input.n) + 1 }),
  s2: (input) => ({ ...input, s2: num(input.s1) * 2 }),
  s3: (input) => ({ ...input, s3: num(input.s1) * 3 }),
  s4: (input) => ({ n: input.n, sum: num(input.s2) + num(input.s3) }),
  double: (input) => ({ item: num(input.item) * 2 }),
  total: (input) => ({ total: (input.items as number[]).reduce((a, b) => a + b, 0) }),
};

/**
 * The real broker stopped (`rabbitmqctl stop_app`) and started again while `switchyard serve` (a
 * process) and SDK workers run a workload: nothing is lost, serve and the workers reconnect by
 * themselves. Restarting the broker disturbs everything else using it: `npm run soak` runs this
 * file alone, and it always starts the broker again, even when it fails.
 */
describe('Broker restarts under load (rabbitmqctl stop_app / start_app)', { timeout: 900_000 }, () => {
  let dir: string;
  let serve: ServeProcess | undefined;
  const workers: Worker[] = [];
  const deliveries = new Map<string, number[]>();

  beforeAll(async () => {
    if (!(await brokerListening())) await startBroker();
    dir = await mkdtemp(join(tmpdir(), 'switchyard-restart-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    for (const [step, handle] of Object.entries(HANDLERS)) {
      const worker = createWorker({
        queue: q(step),
        amqpUrl: AMQP_URL,
        concurrency: 10,
        logger: { info() {}, warn() {}, error() {} },
        handler: (input, context) => {
          deliveries.set(context.correlationId, [
            ...(deliveries.get(context.correlationId) ?? []),
            context.attempt,
          ]);
          return handle(input) as never;
        },
      });
      await worker.start();
      workers.push(worker);
    }
    serve = await spawnServe([
      '--config',
      join(dir, 'workflows.yaml'),
      '--db',
      join(dir, 'switchyard.db'),
      '--reply-queue',
      q('replies'),
    ]);
  });

  afterAll(async () => {
    // Whatever happened above, the broker runs again for whoever comes next.
    if (!(await brokerListening())) await startBroker();
    await serve?.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.stop()));
    await deleteQueues([...Object.keys(HANDLERS).map(q), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  });

  it(`completes every job across ${RESTARTS} broker restarts; serve and the workers recover by themselves`, async () => {
    const url = (serve as ServeProcess).url;
    const jobs: { id: string; workflow: string; input: object; expected: object }[] = [];
    const submitWave = async (wave: number) => {
      const fresh = Array.from({ length: JOBS_PER_WAVE }, (_, k) => {
        const n = wave * JOBS_PER_WAVE + k;
        if (k % 6 === 0) {
          const items = Array.from({ length: 8 }, (_, i) => i + n);
          return {
            id: crypto.randomUUID(),
            workflow: 'fan',
            input: { items },
            expected: { total: items.reduce((a, b) => a + 2 * b, 0) },
          };
        }
        return {
          id: crypto.randomUUID(),
          workflow: 'diamond',
          input: { n },
          expected: { n, sum: (n + 1) * 5 },
        };
      });
      jobs.push(...fresh);
      // The API keeps working while the broker is down: jobs are stored, their requests wait in the outbox.
      await Promise.all(
        fresh.map(async (job) => {
          const response = await fetch(`${url}/api/workflow/${job.workflow}?id=${job.id}`, {
            method: 'POST',
            body: JSON.stringify(job.input),
          });
          expect(response.status).toBe(201);
        }),
      );
    };

    const downtimes: number[] = [];
    let unhealthySeen = 0;
    try {
      for (let restart = 0; restart < RESTARTS; restart++) {
        await submitWave(restart * 2);
        await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 800));
        const stoppedAt = Date.now();
        await stopBroker();
        await submitWave(restart * 2 + 1);
        const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(15_000) }).catch(
          () => undefined,
        );
        if (health?.status === 503) unhealthySeen++;
        await new Promise((resolve) => setTimeout(resolve, 2_000 + Math.random() * 3_000));
        await startBroker();
        downtimes.push(Date.now() - stoppedAt);
      }
    } finally {
      if (!(await brokerListening())) await startBroker();
    }

    const documents = await eventually(
      'every job to end',
      async () => {
        const all = await Promise.all(
          jobs.map(async (job) => (await (await fetch(`${url}/api/job/${job.id}`)).json()) as JobDocument),
        );
        return all.every((document) => document.status !== 'running') ? all : undefined;
      },
      300_000,
    );
    let lost = 0;
    for (const [index, document] of documents.entries()) {
      const job = jobs[index] as (typeof jobs)[number];
      if (document.status !== 'completed') lost++;
      expect({ status: document.status, result: document.result }, job.id).toEqual({
        status: 'completed',
        result: job.expected,
      });
    }
    const attempts = [...deliveries.values()].flat();
    expect(
      attempts.every((attempt) => attempt === 1),
      'no request was a new attempt',
    ).toBe(true);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const figures = {
      restarts: RESTARTS,
      downtimeSeconds: downtimes.map((ms) => Math.round(ms / 100) / 10),
      healthz503DuringOutage: unhealthySeen,
      jobs: jobs.length,
      requests: deliveries.size,
      duplicateDeliveries: [...deliveries.values()].reduce((sum, seen) => sum + seen.length - 1, 0),
      lost,
    };
    reportFigures('broker restarts', figures);
    expect(lost).toBe(0);
    expect(unhealthySeen).toBe(RESTARTS);
  });
});
