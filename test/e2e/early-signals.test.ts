import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_LISTED_STATUSES } from '../../engine/index.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { awaitCallback, createWorker, suspend, type Worker } from '../../functions/worker/index.js';
import { describeRun, runCli } from '../support/cli-process.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';

/*
 * Issue 30: "send a webhook, then wait for the answer", where the answer comes 1 ms after the
 * worker received its request, through the API: before the manager has handled the worker's reply,
 * so before the signal step is ready (or the worker step suspended). Every job must complete.
 */

const suffix = uniqueName('early-signals');
const WEBHOOK = `webhook-${suffix}`;
const SUSPENDING = `suspending-${suffix}`;
const CALLING = `calling-${suffix}`;
const JOBS = 100;

const WORKFLOWS = `workflows:
  - name: webhook-then-wait
    steps:
      - name: send
        queue: ${WEBHOOK}
      - name: answer
        type: signal
        timeout: 5m
        depends: [ send ]
  - name: suspend-then-wait
    steps:
      - name: call
        queue: ${SUSPENDING}
  - name: gated
    steps:
      - name: gate
        workflow: gate-inner
      - name: fan
        task: per-item
        depends: [ gate ]
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: ok
            type: signal
  - name: review
    steps:
      - name: decide
        type: signal
      - name: record
        type: signal
        depends: [ decide ]
  - name: staged
    steps:
      - name: decide
        type: signal
      - name: publish
        workflow: gate-inner
        depends: [ decide ]
  - name: gate-inner
    steps:
      - name: wait
        type: signal
  - name: callback-then-wait
    steps:
      - name: pay
        queue: ${CALLING}
        timeout: 5m
`;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Signals that come before their step waits (serve on RabbitMQ and SQLite, through the API)', () => {
  let serve: TestServe;
  const workers: Worker[] = [];
  /** The status of every signal the partner sent. */
  const answers: number[] = [];

  /** The partner system: answers through the API 1 ms after it was called. */
  const answerSoon = (jobId: string, step: string, body: object) =>
    (async () => {
      await sleep(1);
      const response = await serve.api('POST', `/api/job/${jobId}/signal/${step}`, JSON.stringify(body));
      answers.push(response.status);
      lastAnswerAt = Date.now();
      return response;
    })();

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers.push(
      createWorker({
        queue: WEBHOOK,
        // Calls the partner and replies at once, while its answer is on its way.
        handler: (input, context) => {
          void answerSoon(context.jobId, 'answer', { decision: `yes-${input.n}` });
          return { sent: true };
        },
        concurrency: 20,
        amqpUrl: AMQP_URL,
        logger: quiet,
      }),
      createWorker({
        queue: SUSPENDING,
        // Calls the partner, waits until its answer has arrived, then suspends; sent again with it, done.
        handler: async (input, context) => {
          if (input.signal !== undefined) return { done: input.signal };
          await answerSoon(context.jobId, 'call', { decision: `ok-${input.n}` });
          return suspend('waiting for the partner');
        },
        concurrency: 20,
        amqpUrl: AMQP_URL,
        logger: quiet,
      }),
    );
    workers.push(
      createWorker({
        queue: CALLING,
        // Hands its attempt's token to the partner, which answers the attempt 1 ms later; no reply.
        handler: (input, context) => {
          void (async () => {
            await sleep(1);
            const response = await serve.api(
              'POST',
              `/api/callback/${context.callbackToken}`,
              JSON.stringify({ type: 'success', output: { paid: input.n } }),
            );
            answers.push(response.status);
            lastAnswerAt = Date.now();
          })();
          return awaitCallback('waiting for the payment provider');
        },
        concurrency: 20,
        amqpUrl: AMQP_URL,
        logger: quiet,
      }),
    );
    for (const worker of workers) await worker.start();
  });

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await serve?.stop();
    await deleteQueues([WEBHOOK, SUSPENDING, CALLING]);
  });

  const read = async (id: string) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;

  let lastAnswerAt = 0;
  /** Every answer came more than 10 s ago: whatever still runs is stuck. */
  const stuckLongEnough = () => Date.now() - lastAnswerAt > 10_000;

  const runAll = async (workflow: string) => {
    const ids: string[] = [];
    for (let n = 0; n < JOBS; n++) {
      const started = await serve.api<{ id: string }>(
        'POST',
        `/api/workflow/${workflow}`,
        JSON.stringify({ n }),
      );
      expect(started.status).toBe(201);
      ids.push(started.body.id);
    }
    let jobs: JobDocument[] = [];
    await eventually(
      `${JOBS} jobs of ${workflow} to end and the partner to have every answer's status`,
      async () => {
        jobs = await Promise.all(ids.map(read));
        // Ended, not just "not running": a job waiting for its signal is not running either, and
        // its answer, still on its way, would be counted in the next test. A job that has not
        // ended long after every answer came is one that lost its signal.
        return (
          answers.length === JOBS &&
          (jobs.every((job) => !ACTIVE_LISTED_STATUSES.includes(job.status)) || stuckLongEnough())
        );
      },
      120_000,
    );
    return jobs;
  };

  it(`a signal step after a webhook: ${JOBS} of ${JOBS} jobs complete with their answer`, async () => {
    answers.length = 0;
    const jobs = await runAll('webhook-then-wait');
    expect(jobs.filter((job) => job.status === 'completed').length).toBe(JOBS);
    for (const job of jobs) {
      expect(job.result).toEqual({ sent: true, decision: `yes-${job.input.n}` });
      expect(job.pendingSignals).toBeUndefined();
    }
    // Each answer was taken (200) or kept until its step was ready (202): none refused.
    expect(answers.length).toBe(JOBS);
    expect(answers.filter((status) => status !== 200 && status !== 202)).toEqual([]);
    const kept = answers.filter((status) => status === 202).length;
    console.info(
      `webhook-then-wait: ${kept} answers kept until their step was ready, ${JOBS - kept} taken at once`,
    );
  });

  it(`a worker that suspends after its answer came: ${JOBS} of ${JOBS} jobs complete, each sent again with it`, async () => {
    answers.length = 0;
    const jobs = await runAll('suspend-then-wait');
    expect(jobs.filter((job) => job.status === 'completed').length).toBe(JOBS);
    for (const job of jobs) {
      expect(job.result).toEqual({ done: { decision: `ok-${job.input.n}` } });
      expect(job.steps.call?.attempts.map((attempt) => attempt.outcome)).toEqual(['suspended', 'completed']);
    }
    // The answer came before the suspend reply every time: each was kept (202).
    expect(answers).toEqual(Array.from({ length: JOBS }, () => 202));
  });

  it(`a worker that hands its callback token to a partner: ${JOBS} of ${JOBS} jobs complete by the partner's callback`, async () => {
    answers.length = 0;
    const jobs = await runAll('callback-then-wait');
    expect(jobs.filter((job) => job.status === 'completed').length).toBe(JOBS);
    for (const job of jobs) expect(job.result).toEqual({ paid: job.input.n });
    expect(answers).toEqual(Array.from({ length: JOBS }, () => 200));
  });

  it("a signal reaches a called job's step and fan-out children's steps by path, through the API", async () => {
    const started = await serve.api<{ id: string }>(
      'POST',
      '/api/workflow/gated',
      JSON.stringify({ items: [1, 2] }),
    );
    const id = started.body.id;
    await eventually('the gate to call its job', async () => (await read(id)).steps.gate?.job);
    const gate = await serve.api<JobDocument>('POST', `/api/job/${id}/signal/gate/wait`, '{"open":true}');
    expect(gate.status).toBe(200);
    expect(gate.body.uuid).toBe((await read(id)).steps.gate?.job);
    await eventually('the fan-out to start', async () => (await read(id)).steps.fan?.children === 2);
    for (const index of [0, 1]) {
      const child = await serve.api<JobDocument>('POST', `/api/job/${id}/signal/fan[${index}]/ok`, '{}');
      expect(child.status).toBe(200);
      expect(child.body.index).toBe(index);
    }
    expect((await serve.api('POST', `/api/job/${id}/signal/fan/ok`, '{}')).status).toBe(400);
    await eventually('the job to complete', async () => (await read(id)).status === 'completed');
  });

  it('a signal through a workflow: step that has not started (publish/wait) is kept (202), handed to the called job, and taken', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/staged', '{}');
    const kept = await serve.api<{ message: string; job: JobDocument }>(
      'POST',
      `/api/job/${body.id}/signal/publish/wait`,
      '{"open": 1}',
    );
    expect(kept.status).toBe(202);
    expect(kept.body.message).toBe(
      'step "publish" has not started its called job yet: the job keeps the signal until the step waits for it',
    );
    expect(kept.body.job.uuid).toBe(body.id);
    expect(kept.body.job.pendingSignals).toMatchObject([{ step: 'publish/wait', body: { open: 1 } }]);
    // The same path again while the first is kept: 409, naming why.
    expect((await serve.api('POST', `/api/job/${body.id}/signal/publish/wait`, '{}')).status).toBe(409);
    // A path that can never lead anywhere: 400, nothing kept.
    expect((await serve.api('POST', `/api/job/${body.id}/signal/publish/nope`, '{}')).status).toBe(400);
    expect((await serve.api('POST', `/api/job/${body.id}/signal/decide`, '{}')).status).toBe(200);
    await eventually('the job to complete', async () => (await read(body.id)).status === 'completed');
    const job = await read(body.id);
    expect(job.pendingSignals).toBeUndefined();
    expect(job.result).toEqual({ open: 1 });
    const called = await read(job.steps.publish?.job as string);
    expect(called.steps.wait).toMatchObject({ status: 'completed' });
  });

  it('reruns an ended job from a step with a new input: through the API, then the CLI (switchyard rerun --from --input FILE)', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/review', '{"doc": 1}');
    await serve.api('POST', `/api/job/${body.id}/signal/decide`, '{"decision": "approve"}');
    await serve.api('POST', `/api/job/${body.id}/signal/record`, '{}');
    expect((await read(body.id)).result).toEqual({ doc: 1, decision: 'approve' });

    const rerun = await serve.api<JobDocument>(
      'POST',
      `/api/job/${body.id}/rerun`,
      JSON.stringify({ from: 'decide', input: { decision: 'reject' } }),
    );
    expect(rerun.status).toBe(200);
    expect(rerun.body.steps.decide?.attempts.map((attempt) => attempt.outcome)).toEqual([
      'completed',
      'completed',
    ]);
    expect(rerun.body.steps.record?.status).toBe('running');
    await serve.api('POST', `/api/job/${body.id}/signal/record`, '{}');
    expect((await read(body.id)).result).toEqual({ doc: 1, decision: 'reject' });
    expect((await serve.api('POST', `/api/job/${body.id}/rerun`, '{"from": "nope"}')).status).toBe(400);

    const file = join(serve.dir, 'decision.json');
    await writeFile(file, '{"decision": "later"}');
    const cli = await runCli(
      ['rerun', body.id, '--from', 'decide', '--input', file, '--url', serve.url],
      30_000,
      {
        NO_COLOR: '1',
      },
    );
    expect(cli.code, describeRun(cli)).toBe(0);
    expect((await read(body.id)).steps.record?.status).toBe('running');
    await serve.api('POST', `/api/job/${body.id}/signal/record`, '{}');
    expect((await read(body.id)).result).toEqual({ doc: 1, decision: 'later' });
  });

  it('switchyard signal says when the job keeps the signal (202), and names the refusal (409)', async () => {
    const { body } = await serve.api<{ id: string }>('POST', '/api/workflow/review', '{}');
    const kept = await runCli(
      ['signal', body.id, 'record', '--input', '{"by": "cli"}', '--url', serve.url],
      30_000,
      {
        NO_COLOR: '1',
      },
    );
    expect(kept.code, describeRun(kept)).toBe(0);
    expect(kept.stdout).toContain('signal kept: step "record" is not ready yet');
    expect(kept.stdout).toContain('signals kept until their step waits:');
    await serve.api('POST', `/api/job/${body.id}/signal/decide`, '{}');
    expect((await read(body.id)).result).toEqual({ by: 'cli' });
    const refused = await runCli(['signal', body.id, 'record', '--url', serve.url], 30_000, {
      NO_COLOR: '1',
    });
    expect(refused.code, describeRun(refused)).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('the job is completed');
  });

  it('a kept signal survives a restart of serve (SQLite): the step takes it when it becomes ready', async () => {
    const first = await startTestServe(WORKFLOWS);
    const { body } = await first.api<{ id: string }>('POST', '/api/workflow/review', '{}');
    expect((await first.api('POST', `/api/job/${body.id}/signal/record`, '{"kept": true}')).status).toBe(202);
    await first.handle.close();
    const second = await startTestServe(WORKFLOWS, { db: first.dbPath, replyQueue: first.replyQueue });
    try {
      const restarted = await second.api<JobDocument>('GET', `/api/job/${body.id}`);
      expect(restarted.body.pendingSignals).toMatchObject([{ step: 'record', body: { kept: true } }]);
      await second.api('POST', `/api/job/${body.id}/signal/decide`, '{}');
      const done = await second.api<JobDocument>('GET', `/api/job/${body.id}`);
      expect(done.body.status).toBe('completed');
      expect(done.body.result).toEqual({ kept: true });
    } finally {
      await second.stop();
      await rm(first.dir, { recursive: true, force: true });
    }
  });
});
