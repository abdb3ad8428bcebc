import { hostname } from 'node:os';
import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';

// Every attempt names its worker in the job's history (issue 32): the SDK's workers name themselves
// `<host>:<pid>` unless told otherwise (`x-worker`); a worker of another language that sends no
// `x-worker` is named by its AMQP `app_id`. On the real RabbitMQ and a real SQLite file.

const suffix = uniqueName('history');
const q = (name: string) => `${name}-${suffix}`;
const WORKFLOWS = `workflows:
  - name: chain
    steps:
      - { name: first, queue: ${q('first')} }
      - { name: second, queue: ${q('second')}, depends: [ first ] }
      - { name: third, queue: ${q('third')}, depends: [ second ] }
`;

interface Entry {
  kind: string;
  step?: string;
  worker?: string;
}

describe('A job history names the worker of each attempt, on RabbitMQ', { timeout: 60_000 }, () => {
  let serve: TestServe;
  const workers: Worker[] = [];
  let broker: { model: ChannelModel; channel: Channel };

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers.push(createWorker({ queue: q('first'), handler: async () => ({ a: 1 }) }));
    workers.push(
      createWorker({ queue: q('second'), workerName: 'billing-blue', handler: async () => ({ b: 1 }) }),
    );
    for (const worker of workers) await worker.start();
    broker = await openTestChannel();
    // `third`'s worker speaks AMQP by hand, as a worker in another language would, with an app_id.
    await broker.channel.assertQueue(q('third'), { durable: true });
    await broker.channel.consume(q('third'), (message) => {
      if (!message) return;
      broker.channel.sendToQueue(message.properties.replyTo ?? serve.replyQueue, Buffer.from('{"c":1}'), {
        correlationId: message.properties.correlationId,
        appId: 'python-shipper',
      });
      broker.channel.ack(message);
    });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await broker?.model.close().catch(() => {});
    await serve?.stop();
    await deleteQueues([
      q('first'),
      q('second'),
      q('third'),
      ...(serve ? [serve.replyQueue, `${serve.replyQueue}.dead-letters`] : []),
    ]);
  });

  it('records host:pid by default, the name a worker chose, and the app_id of a worker that sends no x-worker', async () => {
    const started = await serve.api<{ id: string }>('POST', '/api/workflow/chain', '{}');
    expect(started.status).toBe(201);
    const id = started.body.id;
    const entries = await eventually('the job completes', async () => {
      const page = await serve.api<{ events: Entry[] }>('GET', `/api/job/${id}/events`);
      return page.body.events.some((entry) => entry.kind === 'job.completed') && page.body.events;
    });
    const completed = entries.filter((entry) => entry.kind === 'step.completed');
    expect(completed.map(({ step, worker }) => ({ step, worker }))).toEqual([
      { step: 'first', worker: `${hostname()}:${process.pid}` },
      { step: 'second', worker: 'billing-blue' },
      { step: 'third', worker: 'python-shipper' },
    ]);
  });
});
