import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { closeConnectionsNamed, uniqueName } from '../support/rabbitmq.js';

const suffix = uniqueName('trouble');
const q = (name: string) => `${name}-${suffix}`;
const CONNECTION = `switchyard-serve-${suffix}`;
const JOBS = 150;

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
`;

/** The broker drops serve's connections under load (as a restart or a network fault would). */
describe('Broker trouble: connections closed under load', { timeout: 120_000 }, () => {
  let serve: TestServe;
  let workers: PlainWorkers;

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS, { connectionName: CONNECTION });
    workers = await startPlainWorkers(
      {
        [q('s1')]: (input) => ({ ...input, s1: 1 }),
        [q('s2')]: (input) => ({ ...input, s2: 2 }),
        [q('s3')]: (input) => ({ ...input, s3: 3 }),
        [q('s4')]: (input) => ({
          n: input.n,
          sum: (input.s1 as number) + (input.s2 as number) + (input.s3 as number),
        }),
      },
      { prefetch: 10, delayMs: 5, connectionName: `switchyard-test-workers-${suffix}` },
    );
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
  });

  it('reconnects by itself and completes every job', async () => {
    const ids = await Promise.all(
      Array.from({ length: JOBS }, async (_, n) => {
        const response = await serve.api<{ id: string }>(
          'POST',
          '/api/workflow/diamond',
          JSON.stringify({ n }),
        );
        return response.body.id;
      }),
    );
    let closed = 0;
    for (let round = 0; round < 4; round++) {
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
      closed += await closeConnectionsNamed(CONNECTION, 'closed by the broker-trouble test');
    }
    expect(closed).toBeGreaterThan(0);
    const documents = await eventually(
      async () => {
        const all = await Promise.all(
          ids.map(async (id) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body),
        );
        return all.every((job) => job.status === 'completed') ? all : false;
      },
      90_000,
      250,
    );
    for (const [n, job] of documents.entries()) expect(job.result).toEqual({ n, sum: 6 });
    expect((await serve.api('GET', '/healthz')).status).toBe(200);
  });
});
