import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POISONED_REASON_HEADER, poisonQueueOf } from '../../functions/adapters/rabbitmq/poison-queue.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { MAX_CRASHES_IN_HAND, poisonedReason } from '../../functions/manager/reply-policy.js';
import { metricValue } from '../support/metrics-text.js';
import { deleteQueues, eventually, openTestChannel, queueCounts, uniqueName } from '../support/rabbitmq.js';
import { reply, type ScriptedWorkers, startScriptedWorkers } from '../support/scripted-workers.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { reportFigures } from '../support/soak.js';

/*
 * Issue 28's crash loop, for real: a reply whose handling kills serve. Nothing in it is forged: serve
 * runs with a heap of HEAP_MB (--max-old-space-size) and takes replies up to 64 MiB (--max-reply),
 * and the reply is REPLY_MB of JSON: a list of four million small objects. Reading it fits (one
 * string); parsing it does not, and V8 ends the process ("heap out of memory", SIGABRT) with the
 * reply unacknowledged, so RabbitMQ delivers it again at every start. The test restarts serve on the
 * same database each time it dies, as a supervisor would.
 */
const HEAP_MB = 128;
const REPLY_MB = 32;
const ROW = '{"a":1},';
const BULKY_REPLY = `{"rows":[${ROW.repeat((REPLY_MB * 1024 * 1024) / ROW.length)}{"a":1}]}`;
/**
 * The batch that brought the reply, perhaps the batch of replies given again it came back with, then
 * each death with it alone in hand.
 */
const LEAST_DEATHS = MAX_CRASHES_IN_HAND + 1;
const MOST_DEATHS = MAX_CRASHES_IN_HAND + 2;
/** Starts before the test gives up on serve coming up for good. */
const MAX_STARTS = MOST_DEATHS + 3;

const suffix = uniqueName('crash-loop');
const q = (name: string) => `${name}-${suffix}`;
const replyQueue = q('replies');

const BULKY = `workflows:
  - name: bulky
    steps:
      - { name: produce, queue: ${q('produce')}, retries: 2 }
      - { name: consume, queue: ${q('consume')}, depends: [ produce ] }
`;
/** team-b's queues start with its prefix. */
const teamB = `${q('team-b')}.`;
const STEADY = `namespace: team-b
queuePrefix: ${teamB}
workflows:
  - name: steady
    steps:
      - { name: work, queue: work }
      - { name: more, queue: work, depends: [ work ] }
`;

describe('Crash loop: a reply whose handling kills serve (child process, RabbitMQ, SQLite)', {
  timeout: 600_000,
}, () => {
  let dir: string;
  let args: string[];
  let serve: ServeProcess | undefined;
  let workers: ScriptedWorkers;
  let inspector: Awaited<ReturnType<typeof openTestChannel>>;
  const produced: ConsumeMessage[] = [];

  const api = async <T>(
    method: string,
    path: string,
    body?: string,
  ): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${serve?.url}${path}`, { method, body });
    const text = await response.text();
    const json = response.headers.get('content-type')?.includes('json');
    return { status: response.status, body: (json ? JSON.parse(text) : text) as T };
  };
  const start = async (path: string, body = '{}'): Promise<string> => {
    const response = await api<{ id: string }>('POST', path, body);
    expect(response.status).toBe(201);
    return response.body.id;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-crash-loop-'));
    await writeFile(join(dir, 'bulky.yaml'), BULKY);
    await writeFile(join(dir, 'steady.yaml'), STEADY);
    args = [
      ...['--config', join(dir, 'bulky.yaml'), '--config', join(dir, 'steady.yaml')],
      ...['--db', join(dir, 'switchyard.db'), '--reply-queue', replyQueue],
      ...['--max-reply', String(64 * 1024 * 1024), '--log-format', 'json'],
    ];
    workers = await startScriptedWorkers(
      { [`${teamB}work`]: ({ input }) => [reply({ ...input, worked: true })] },
      { connectionName: `switchyard-test-${suffix}` },
    );
    inspector = await openTestChannel();
    // The test is the worker of `produce`: it takes the requests and answers one itself.
    await inspector.channel.assertQueue(q('produce'), { durable: true });
    await inspector.channel.consume(q('produce'), (message) => {
      if (!message) return;
      produced.push(message);
      inspector.channel.ack(message);
    });
  });

  afterAll(async () => {
    await serve?.kill('SIGTERM');
    await workers?.stop();
    await inspector?.model.close().catch(() => {});
    await deleteQueues([
      ...['produce', 'consume'].map(q),
      `${teamB}work`,
      replyQueue,
      poisonQueueOf(replyQueue),
      `${replyQueue}.dead-letters`,
    ]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`is poisoned after ${LEAST_DEATHS} or ${MOST_DEATHS} deaths: serve stays up, the job fails naming why, the reply waits in <reply queue>.poisoned, and team-b's jobs complete`, async () => {
    // Prepare: team-b's jobs run while the bulky job waits for its reply.
    serve = await spawnServe(args, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }, 120_000);
    const steady = await Promise.all(
      Array.from({ length: 10 }, (_, n) => start('/api/ns/team-b/workflow/steady', JSON.stringify({ n }))),
    );
    const bulky = await start('/api/workflow/bulky');
    await eventually('the produce request', () => produced.length === 1);
    const request = produced[0] as ConsumeMessage;

    // Act: the worker's answer is REPLY_MB of JSON; serve is restarted each time it dies.
    inspector.channel.sendToQueue(String(request.properties.replyTo), Buffer.from(BULKY_REPLY), {
      correlationId: String(request.properties.correlationId),
      headers: { 'x-attempt': request.properties.headers?.['x-attempt'] },
    });
    const deaths: { signal: string | null; outOfMemory: boolean }[] = [];
    let starts = 1;
    for (;;) {
      const current = serve;
      const outcome = await Promise.race([
        exitOf(current),
        produceSettled(current, bulky).then(() => 'up' as const),
      ]);
      if (outcome === 'up') break;
      deaths.push({ signal: outcome, outOfMemory: current.output().includes('heap out of memory') });
      if (starts >= MAX_STARTS)
        throw new Error(`serve died ${deaths.length} times:\n${current.output().slice(-3000)}`);
      // More of team-b's jobs start between deaths, whenever serve is up to take them.
      serve = await spawnServe(args, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }, 120_000);
      starts++;
      steady.push(await start('/api/ns/team-b/workflow/steady', JSON.stringify({ n: 100 + starts })));
    }

    // Assess: it died as often as the policy says, of its heap, and then stayed up.
    expect(deaths.length).toBeGreaterThanOrEqual(LEAST_DEATHS);
    expect(deaths.length).toBeLessThanOrEqual(MOST_DEATHS);
    expect(deaths).toEqual(new Array(deaths.length).fill({ signal: 'SIGABRT', outOfMemory: true }));
    expect((await api('GET', '/healthz')).status).toBe(200);
    const failed = (await api<JobDocument>('GET', `/api/job/${bulky}`)).body;
    expect(failed).toMatchObject({
      status: 'failed',
      error: { step: 'produce', attempt: 1, message: poisonedReason(MAX_CRASHES_IN_HAND) },
    });
    expect(failed.steps.produce).toMatchObject({ status: 'failed', attempt: 1 });
    expect(failed.steps.consume?.status).not.toBe('running');
    // The reply waits in the poison queue, as it came, with why.
    await eventually(
      'the poisoned reply',
      async () => (await queueCounts(poisonQueueOf(replyQueue)))?.ready === 1,
    );
    const kept = await inspector.channel.get(poisonQueueOf(replyQueue), { noAck: false });
    if (!kept) throw new Error('the poison queue is empty');
    inspector.channel.nack(kept, false, true);
    expect(kept.content.toString()).toBe(BULKY_REPLY);
    expect(kept.properties.correlationId).toBe(`${bulky}:produce`);
    expect(kept.properties.headers?.[POISONED_REASON_HEADER]).toBe(poisonedReason(MAX_CRASHES_IN_HAND));
    expect(await queueCounts(replyQueue)).toEqual({ ready: 0, unacknowledged: 0 });
    // Every job of team-b, started before, between and after the deaths, completed.
    for (const id of steady) {
      const done = await eventually(`team-b job ${id}`, async () => {
        const document = (await api<JobDocument>('GET', `/api/ns/team-b/job/${id}`)).body;
        return document.status === 'running' ? undefined : document;
      });
      expect(done).toMatchObject({ status: 'completed', result: { worked: true } });
    }
    const metrics = (await api<string>('GET', '/metrics')).body;
    expect(metricValue(metrics, 'switchyard_replies_poisoned_total')).toBe(1);
    reportFigures('crash loop', { starts, deaths: deaths.length, teamBJobs: steady.length });
  });
});

/** How the process ended: its signal (V8 aborts on an out-of-memory heap). */
function exitOf(serve: ServeProcess): Promise<string | null> {
  if (serve.child.exitCode !== null || serve.child.signalCode !== null)
    return Promise.resolve(serve.child.signalCode);
  return new Promise((resolve) => serve.child.once('exit', (_code, signal) => resolve(signal)));
}

/** Resolves once the job's `produce` step is settled, as this serve answers; never once it died. */
async function produceSettled(serve: ServeProcess, id: string): Promise<void> {
  for (;;) {
    if (serve.child.exitCode !== null || serve.child.signalCode !== null) return new Promise(() => {});
    try {
      const response = await fetch(`${serve.url}/api/job/${id}`);
      const document = (await response.json()) as JobDocument;
      if (document.steps.produce?.status !== 'running') return;
    } catch {
      // serve is dying or down: its exit wins the race
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
