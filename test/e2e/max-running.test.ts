import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { describeRun, runCli } from '../support/cli-process.js';
import { HeldRequests } from '../support/held-requests.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';

const suffix = uniqueName('max-running');
const WORKFLOW = `limited-${suffix}`;
const QUEUE = `work-${suffix}`;
const JOBS = 6;
const MAX = 2;

const WORKFLOWS = `workflows:
  - name: ${WORKFLOW}
    maxRunning: ${MAX}
    steps:
      - name: work
        queue: ${QUEUE}
`;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe('maxRunning on serve (RabbitMQ and SQLite, the API and the CLI)', () => {
  let serve: TestServe;
  let worker: Worker;
  const held = new HeldRequests();

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    // The worker could take every job at once: only the limit holds them back.
    worker = createWorker({
      queue: QUEUE,
      handler: held.handler,
      concurrency: 10,
      amqpUrl: AMQP_URL,
      logger: quiet,
    });
    await worker.start();
  });

  afterAll(async () => {
    held.releaseAll();
    await worker?.stop();
    await serve?.stop();
    await deleteQueues([QUEUE]);
  });

  const read = async (id: string) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
  const statuses = async (ids: readonly string[]) =>
    Promise.all(ids.map(async (id) => (await read(id)).status));

  it(`runs ${MAX} of ${JOBS} jobs at once, shows the rest queued, and starts them in order as others end`, async () => {
    const ids: string[] = [];
    for (let n = 0; n < JOBS; n++) {
      const started = await serve.api<{ id: string }>(
        'POST',
        `/api/workflow/${WORKFLOW}`,
        JSON.stringify({ n }),
      );
      expect(started.status).toBe(201);
      ids.push(started.body.id);
    }
    const first = [await held.take('the first request'), await held.take('the second request')];
    expect(first.map((request) => request.jobId).sort()).toEqual(ids.slice(0, MAX).sort());

    // The API: 2 running, 4 queued in the order they were started, each with its place.
    expect(await statuses(ids)).toEqual(['running', 'running', 'queued', 'queued', 'queued', 'queued']);
    const listing = await serve.api<{ running: string[]; queued: string[] }>(
      'GET',
      `/api/workflow/${WORKFLOW}`,
    );
    expect(listing.body.queued).toEqual(ids.slice(MAX));
    expect((await read(ids[3] as string)).queuePosition).toBe(2);
    // The CLI lists them, and tells a queued job's place.
    const queued = await runCli([
      'jobs',
      '--workflow',
      WORKFLOW,
      '--status',
      'queued',
      '-o',
      'json',
      '--url',
      serve.url,
    ]);
    expect(queued.code, describeRun(queued)).toBe(0);
    expect((JSON.parse(queued.stdout) as { uuid: string }[]).map((job) => job.uuid).sort()).toEqual(
      ids.slice(MAX).sort(),
    );
    const status = await runCli(['status', ids[2] as string, '--url', serve.url], 30_000, { NO_COLOR: '1' });
    expect(status.stdout, describeRun(status)).toContain('number 1 in the queue');
    const listed = await runCli(['workflows', '--url', serve.url], 30_000, { NO_COLOR: '1' });
    const header = listed.stdout.split('\n')[0]?.split(/\s+/) ?? [];
    const row =
      listed.stdout
        .split('\n')
        .find((line) => line.startsWith(WORKFLOW))
        ?.split(/\s+/) ?? [];
    expect(row[header.indexOf('RUNNING')], describeRun(listed)).toBe(String(MAX));
    expect(row[header.indexOf('QUEUED')], describeRun(listed)).toBe(String(JOBS - MAX));
    const described = await runCli(['describe', WORKFLOW, '--url', serve.url], 30_000, { NO_COLOR: '1' });
    expect(described.stdout, describeRun(described)).toContain(`at most ${MAX} running at once`);

    // Each release lets the next queued job start, first started first.
    const order = first.map((request) => request.jobId);
    let running = first;
    for (let n = MAX; n < JOBS; n++) {
      const [done, ...rest] = running as [(typeof first)[number], ...typeof first];
      done.release({ n });
      const next = await held.take(`the request of job ${n}`);
      order.push(next.jobId);
      running = [...rest, next];
    }
    for (const request of running) request.release({});
    expect(order.slice(MAX)).toEqual(ids.slice(MAX));
    await eventually('every job completes', async () =>
      (await statuses(ids)).every((s) => s === 'completed'),
    );
    const counts = await serve.api<{ name: string; jobs: Record<string, number> }[]>('GET', '/api/workflows');
    expect(counts.body.find((w) => w.name === WORKFLOW)?.jobs).toMatchObject({
      completed: JOBS,
      queued: 0,
      running: 0,
    });
  });
});
