import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calledJobId } from '../../engine/job/calls.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, PlainReply, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { AMQP_URL, uniqueName } from '../support/rabbitmq.js';

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
  - name: nap
    steps:
      - name: shape
        output: '{"name": input.who.name}'
      - name: wait
        depends: [ shape ]
        sleep: 1s
      - name: greet
        queue: ${q('greet')}
        depends: [ wait ]
      - name: too-long
        depends: [ shape ]
        when: size(input.name) > 10
        fail: { message: '"the name " + input.name + " is too long"' }
      - name: short-enough
        depends: [ shape ]
        otherwise: true
        output: '{"short": true}'
  - name: partner
    steps:
      - name: call
        queue: ${q('partner')}
        retries: 4
        retryDelay: 100ms
        backoffRate: 1.5
        maxRetryDelay: 200ms
        jitter: full
        retryOn: [ { errorMatches: "503" } ]
  - name: poll
    steps:
      - name: status
        queue: ${q('status')}
        repeat: { until: 'output.status == "done"', max: 5, delay: 200ms }
      - name: report
        depends: [ status ]
        output: '{"finished": output.status}'
  - name: rounds
    steps:
      - name: round
        workflow: one-round
        repeat: { until: 'output.left == 0', max: 5, delay: 100ms }
  - name: one-round
    steps:
      - name: take
        queue: ${q('take')}
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
  const partnerCalls = new Map<string, number>();
  const statusPolls = new Map<string, number>();

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers = await startPlainWorkers({
      [q('draft')]: (input) => ({ ...input, drafted: true }),
      [q('publish')]: (input) => ({ ...input, published: true }),
      [q('greet')]: (input) => ({ greeting: `hello ${input.name}` }),
      // "pending" twice per job, then "done".
      [q('status')]: (_input, correlationId) => {
        const polls = (statusPolls.get(correlationId) ?? 0) + 1;
        statusPolls.set(correlationId, polls);
        return { status: polls < 3 ? 'pending' : 'done', polls };
      },
      // Answers 503 twice per job, then succeeds; or 404 at once when asked to.
      [q('partner')]: (input, correlationId) => {
        const calls = (partnerCalls.get(correlationId) ?? 0) + 1;
        partnerCalls.set(correlationId, calls);
        if (input.missing) return new PlainReply({ error: 'HTTP 404' }, { type: 'error' });
        return calls <= 2 ? new PlainReply({ error: 'HTTP 503' }, { type: 'error' }) : { calls };
      },
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

  it("sleep: the step sleeps on serve's timers, shown as sleeping until its wake time, then the flow goes on; output reshapes, otherwise and fail branch", async () => {
    const id = await start(serve, 'nap', { who: { name: 'ann' } });
    const asleep = await eventually(async () => {
      const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}`);
      return body.steps.wait?.sleepingUntil ? body : false;
    });
    expect(asleep.status).toBe('running');
    const wakes = Date.parse(asleep.steps.wait?.sleepingUntil as string);
    const job = await waitForJob(serve, id);
    expect(job.status).toBe('completed');
    expect(Date.parse(job.steps.wait?.endedAt as string)).toBeGreaterThanOrEqual(wakes);
    expect(job.steps.wait?.sleepingUntil).toBeUndefined();
    expect(job.steps['too-long']?.status).toBe('skipped');
    expect(job.result).toEqual({ greeting: 'hello ann', short: true });

    const failing = await waitForJob(
      serve,
      await start(serve, 'nap', { who: { name: 'bartholomew the third' } }),
    );
    expect(failing.status).toBe('failed');
    expect(failing.error?.message).toBe('the name bartholomew the third is too long');
  });

  it('retry policy: retries the errors retryOn matches (after capped, jittered delays) and fails at once on another', async () => {
    const id = await start(serve, 'partner', {});
    const job = await waitForJob(serve, id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ calls: 3 });
    expect(job.steps.call?.attempts.map((attempt) => attempt.outcome)).toEqual([
      'error',
      'error',
      'completed',
    ]);

    const missing = await waitForJob(serve, await start(serve, 'partner', { missing: true }));
    expect(missing.status).toBe('failed');
    expect(missing.steps.call?.attempt).toBe(1);
    expect(missing.error?.message).toBe('HTTP 404 (not retried: "retryOn" does not match it)');
  });

  it('repeat: polls until the condition holds on the output, each iteration in the attempt history', async () => {
    const id = await start(serve, 'poll', {});
    const job = await waitForJob(serve, id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ finished: 'done' });
    expect(job.steps.status?.iterations).toBe(3);
    expect(job.steps.status?.attempts.map((attempt) => [attempt.outcome, attempt.output])).toEqual([
      ['repeated', { status: 'pending', polls: 1 }],
      ['repeated', { status: 'pending', polls: 2 }],
      ['completed', undefined],
    ]);
  });
});

describe('repeat on a workflow: step, through serve', () => {
  it("runs a new called job per iteration until the called job's result meets the condition", async () => {
    const serve = await startTestServe(WORKFLOWS);
    const workers = await startPlainWorkers({
      [q('take')]: (() => {
        let taken = 0;
        return (input: Record<string, unknown>) => ({ key: input.key, left: 3 - ++taken });
      })(),
    });
    try {
      const id = await start(serve, 'rounds', { key: 'k' });
      const job = await waitForJob(serve, id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ key: 'k', left: 0 });
      expect(job.steps.round?.iterations).toBe(3);
      const called = [1, 2, 3].map((attempt) => calledJobId(id, 'round', attempt));
      expect(job.steps.round?.job).toBe(called[2]);
      for (const [n, calledId] of called.entries()) {
        const { body } = await serve.api<JobDocument>('GET', `/api/job/${calledId}`);
        expect(body).toMatchObject({ status: 'completed', result: { key: 'k', left: 2 - n } });
      }
    } finally {
      await workers.stop();
      await serve.stop();
    }
  });
});

describe('A sleep: step across a restart of serve', () => {
  it('wakes on time after serve stopped while it slept: the timer is re-armed from the SQLite file', async () => {
    const serve = await startTestServe(`workflows:
  - name: long-nap
    steps:
      - name: wait
        sleep: 1500ms
      - name: after
        depends: [ wait ]
        output: '{"woke": true}'
`);
    let handle = serve.handle;
    try {
      const id = await start(serve, 'long-nap', {});
      const asleep = await eventually(async () => {
        const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}`);
        return body.steps.wait?.sleepingUntil ? body : false;
      });
      await serve.handle.close();
      const { startServe } = await import('../../functions/local/serve.js');
      const { silentLogger } = await import('../../functions/telemetry/telemetry.js');
      handle = await startServe({
        configFiles: [],
        db: serve.dbPath,
        amqpUrl: AMQP_URL,
        port: 0,
        replyQueue: serve.replyQueue,
        logger: silentLogger,
      });
      const url = handle.url;
      const job = await eventually(async () => {
        const document = (await (await fetch(`${url}/api/job/${id}`)).json()) as JobDocument;
        return document.status === 'completed' ? document : false;
      });
      expect(job.result).toEqual({ woke: true });
      expect(Date.parse(job.steps.wait?.endedAt as string)).toBeGreaterThanOrEqual(
        Date.parse(asleep.steps.wait?.sleepingUntil as string),
      );
    } finally {
      await handle.close().catch(() => {});
      await serve.stop().catch(() => {});
    }
  });
});
