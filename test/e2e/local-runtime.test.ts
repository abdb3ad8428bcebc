import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWordCountWorkers } from '../../examples/word-counts/workers.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { AMQP_URL, uniqueName } from '../support/rabbitmq.js';

const suffix = uniqueName('local');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: diamond
    steps:
      - name: s1
        queue: ${q('s1')}
      - name: s2
        queue: ${q('s2')}
        depends: [ s1 ]
      - name: s3
        queue: ${q('s3')}
        depends: [ s1 ]
      - name: s4
        queue: ${q('s4')}
        depends: [ s2, s3 ]
  - name: fan
    steps:
      - name: split
        queue: ${q('split')}
      - name: each
        task: per-element
        depends: [ split ]
      - name: join
        queue: ${q('join')}
        depends: [ each ]
    tasks:
      - name: per-element
        itemListKey: elements
        steps:
          - name: square
            queue: ${q('square')}
  - name: flaky
    steps:
      - name: sometimes
        queue: ${q('sometimes')}
        # The second attempt's round trip must fit in it, on a busy CI machine too.
        timeout: 3s
        retries: 2
        retryDelay: 200ms
`;

async function waitForJob(serve: TestServe, id: string, ms = 20_000): Promise<JobDocument> {
  return eventually(async () => {
    const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}?wait=5`);
    if (body.status === 'running' || body.status === 'waiting' || body.status === 'pending') return false;
    return body;
  }, ms);
}

describe('The local runtime on RabbitMQ and a SQLite file', () => {
  let serve: TestServe;
  let workers: PlainWorkers;
  const sometimesCalls = new Map<string, number>();

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers = await startPlainWorkers({
      [q('s1')]: (input) => ({ ...input, s1: true }),
      [q('s2')]: (input) => ({ ...input, s2: true, shared: 's2' }),
      [q('s3')]: (input) => ({ ...input, s3: true, shared: 's3' }),
      [q('s4')]: (input) => ({ done: Object.keys(input).sort().join(',') }),
      [q('split')]: (input) => ({ ...input, elements: [1, 2, 3, 4, 5] }),
      [q('square')]: (input) => ({ ...input, element: (input.element as number) ** 2 }),
      [q('join')]: (input) => ({
        sum: (input.elements as number[]).reduce((a, b) => a + b, 0),
        elements: input.elements,
      }),
      // The original's workers may send no reply at all: here the first delivery of each job gets none.
      [q('sometimes')]: (input, correlationId) => {
        const calls = (sometimesCalls.get(correlationId) ?? 0) + 1;
        sometimesCalls.set(correlationId, calls);
        return calls === 1 ? undefined : { ...input, calls };
      },
    });
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
  });

  it('completes a diamond with workers that speak the original protocol (plain amqplib)', async () => {
    const { status, body } = await serve.api<{ id: string }>('POST', '/api/workflow/diamond', '{"x":1}', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(status).toBe(201);
    const job = await waitForJob(serve, body.id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ done: 's1,s2,s3,shared,x' });
    expect(job.completed.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['__start__', 's1', 's2', 's3', 's4', '__end__']),
    );
    expect(job.completed[0]).toMatchObject({ name: '__start__', message: { x: 1 } });
    expect(job.completed.at(-1)).toMatchObject({ name: '__end__', message: { done: 's1,s2,s3,shared,x' } });
    expect(workers.deliveries.get(`${body.id}:s4`)).toBe(1);
  });

  it('completes a fan-out with workers that speak the original protocol', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/fan', '{}');
    const job = await waitForJob(serve, body.id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ sum: 55, elements: [1, 4, 9, 16, 25] });
    expect(job.steps.each).toMatchObject({ status: 'completed', children: 5, childrenDone: 5 });
    const children = await serve.api<{ children: { uuid: string; index: number; status: string }[] }>(
      'GET',
      `/api/job/${body.id}/children?step=each`,
    );
    expect(children.body.children.map((child) => [child.index, child.status])).toEqual([
      [0, 'completed'],
      [1, 'completed'],
      [2, 'completed'],
      [3, 'completed'],
      [4, 'completed'],
    ]);
    const child = await serve.api<JobDocument>('GET', `/api/job/${children.body.children[2]?.uuid}`);
    expect(child.body).toMatchObject({
      parent: body.id,
      index: 2,
      status: 'completed',
      result: { element: 9 },
    });
  });

  it('turns a lost reply into a retry through the step timeout', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/flaky', '{"n":1}');
    const job = await waitForJob(serve, body.id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ n: 1, calls: 2 });
    expect(job.steps.sometimes?.attempt).toBe(2);
    // Every attempt is in the document: the first timed out, the second completed the step.
    expect(job.steps.sometimes?.attempts).toMatchObject([
      { attempt: 1, outcome: 'timeout', error: 'no reply within 3s (attempt 1)' },
      { attempt: 2, outcome: 'completed' },
    ]);
    expect(workers.attempts.get(`${body.id}:sometimes`)).toEqual([1, 2]);
  });

  it('keeps replies that arrive while serve is down, and finishes the job after a restart', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/diamond', '{"restart":true}');
    await serve.handle.close();
    // Workers go on replying into the durable reply queue while the manager is down.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { startServe } = await import('../../functions/local/serve.js');
    const { silentLogger } = await import('../../functions/telemetry/telemetry.js');
    const restarted = await startServe({
      configFiles: [],
      db: serve.dbPath,
      amqpUrl: AMQP_URL,
      port: 0,
      replyQueue: serve.replyQueue,
      logger: silentLogger,
    });
    serve.handle = restarted;
    const url = restarted.url;
    const job = await eventually(async () => {
      const response = await fetch(`${url}/api/job/${body.id}`);
      const document = (await response.json()) as JobDocument;
      return document.status === 'completed' ? document : false;
    });
    expect(job.result).toEqual({ done: 'restart,s1,s2,s3,shared' });
    (serve as { url: string }).url = url;
  });
});

describe('The word-count example on RabbitMQ and SQLite', () => {
  it('counts the words of the book', { timeout: 60_000 }, async () => {
    const { readFile } = await import('node:fs/promises');
    const exampleYaml = await readFile(
      new URL('../../examples/word-counts/workflows.yaml', import.meta.url),
      'utf8',
    );
    const serve = await startTestServe(exampleYaml);
    const workers = await startWordCountWorkers({ dataDir: `${serve.dir}/data`, amqpUrl: AMQP_URL });
    try {
      const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/book-word-counts', '{}');
      const job = await waitForJob(serve, body.id, 45_000);
      expect(job.status).toBe('completed');
      const result = job.result as {
        title: string;
        chapters: number;
        tokens: number;
        distinct: number;
        countsFile: string;
        top: { word: string; count: number }[];
      };
      expect(result).toMatchObject({
        title: 'Alice’s Adventures in Wonderland',
        chapters: 12,
        tokens: 29_371,
        distinct: 5_947,
      });
      expect(result.top[0]).toEqual({ word: 'the', count: 1_673 });
      const counts = JSON.parse(await readFile(result.countsFile, 'utf8')) as Record<string, number>;
      expect(counts.the).toBe(1_673);
      expect(Object.keys(counts)).toHaveLength(5_947);
      expect(job.steps['section-counts']).toMatchObject({ children: 12, childrenDone: 12 });
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await serve.stop();
    }
  });
});
