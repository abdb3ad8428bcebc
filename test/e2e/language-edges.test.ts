import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { uniqueName } from '../support/rabbitmq.js';

/* Issue 30: the language at its edges (joins, steps that need no worker, retry policies, loops), through serve on RabbitMQ and a SQLite file. */

const suffix = uniqueName('edges');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: approval
    steps:
      - name: draft
        queue: ${q('draft')}
      - name: approve
        type: signal
        depends: [ draft ]
        when: input.amount > 1000
      - name: publish
        queue: ${q('publish')}
        depends: [ approve ]
        join: none_failed
`;

async function waitForJob(serve: TestServe, id: string, ms = 20_000): Promise<JobDocument> {
  return eventually(async () => {
    const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}?wait=5`);
    if (body.status === 'running' || body.status === 'waiting') return false;
    return body;
  }, ms);
}

async function start(serve: TestServe, workflow: string, input: object): Promise<string> {
  const { status, body } = await serve.api<{ id: string }>(
    'POST',
    `/api/workflow/${workflow}`,
    JSON.stringify(input),
    {
      'content-type': 'application/json',
    },
  );
  expect(status).toBe(201);
  return body.id;
}

describe('The language at its edges, through serve on RabbitMQ and SQLite', () => {
  let serve: TestServe;
  let workers: PlainWorkers;

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers = await startPlainWorkers({
      [q('draft')]: (input) => ({ ...input, drafted: true }),
      [q('publish')]: (input) => ({ ...input, published: true }),
    });
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
  });

  it('join none_failed: publishes when the optional approval was skipped, with what the approval would have got', async () => {
    const id = await start(serve, 'approval', { amount: 10 });
    const job = await waitForJob(serve, id);
    expect(job.status).toBe('completed');
    expect(job.steps.approve?.status).toBe('skipped');
    expect(job.result).toEqual({ amount: 10, drafted: true, published: true });
  });

  it('join none_failed: waits for the approval when it is needed, then publishes', async () => {
    const id = await start(serve, 'approval', { amount: 5000 });
    await eventually(async () => {
      const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}`);
      return body.steps.approve?.status === 'running';
    });
    const signal = await serve.api('POST', `/api/job/${id}/signal/approve`, '{"approvedBy":"ann"}', {
      'content-type': 'application/json',
    });
    expect(signal.status).toBe(200);
    const job = await waitForJob(serve, id);
    expect(job.status).toBe('completed');
    expect(job.result).toMatchObject({ amount: 5000, drafted: true, approvedBy: 'ann', published: true });
  });
});
