import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { TOKEN_HEADER } from '../../functions/transport/request-token.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { metricValue } from '../support/metrics-text.js';
import { deleteQueues, eventually, openTestChannel, queueCounts, uniqueName } from '../support/rabbitmq.js';

// Replies can be trusted (issue: "Replies are not authenticated"): anyone who can publish on the
// broker could complete or abort any namespace's running step, and 500 forged "expired" dead letters
// made the manager send one request 500 times. The broker is the trust boundary (protocol.md); with
// `--reply-auth` a reply must echo its request's token. RELIABILITY.md's security table names this file.

const suffix = uniqueName('reply-auth');
const q = (name: string) => `${name}-${suffix}`;
const WORKFLOWS = `workflows:
  - name: answered
    steps:
      - { name: work, queue: ${q('work')} }
  - name: held
    steps:
      - { name: wait, queue: ${q('held')} }
`;

/** The test stands for the worker of `held`: it takes each request and keeps it, unanswered. */
async function holdRequests(channel: Channel, queue: string, into: ConsumeMessage[]): Promise<void> {
  await channel.assertQueue(queue, { durable: true });
  await channel.consume(queue, (message) => {
    if (!message) return;
    into.push(message);
    channel.ack(message);
  });
}

describe.each([
  { auth: true, name: 'on (`--reply-auth`)' },
  { auth: false, name: 'off (the default)' },
])('Reply authentication $name, on RabbitMQ and SQLite', { timeout: 60_000 }, ({ auth }) => {
  let serve: TestServe;
  let worker: Worker;
  let inspector: { model: ChannelModel; channel: Channel };
  const held: ConsumeMessage[] = [];
  const heldQueue = `${q('held')}-${auth}`;

  const start = async (workflow: string) => {
    const response = await serve.api<{ id: string }>('POST', `/api/workflow/${workflow}`, '{}');
    expect(response.status).toBe(201);
    return response.body.id;
  };
  const job = async (id: string) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
  const publishReply = (
    correlationId: string,
    body: unknown,
    options: { type?: string; headers?: object } = {},
  ) =>
    inspector.channel.sendToQueue(serve.replyQueue, Buffer.from(JSON.stringify(body)), {
      correlationId,
      ...(options.type ? { type: options.type } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    });
  const counter = async (name: string, labels: Record<string, string>) =>
    metricValue((await serve.api<string>('GET', '/metrics')).body, name, labels);

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS.replace(q('held'), heldQueue), { replyAuth: auth });
    worker = createWorker({ queue: q('work'), handler: async (input) => ({ ...input, worked: true }) });
    await worker.start();
    inspector = await openTestChannel();
    await holdRequests(inspector.channel, heldQueue, held);
  });

  afterAll(async () => {
    await worker?.stop();
    await inspector?.model.close().catch(() => {});
    await serve?.stop();
    await deleteQueues([
      q('work'),
      heldQueue,
      ...(serve ? [serve.replyQueue, `${serve.replyQueue}.dead-letters`] : []),
    ]);
  });

  it('runs a job with an SDK worker, which echoes each request’s token', async () => {
    const id = await start('answered');
    const done = await eventually(`job ${id} to complete`, async () => {
      const document = await job(id);
      return document.status === 'completed' ? document : undefined;
    });
    expect(done.result).toEqual({ worked: true });
  });

  it(
    auth
      ? 'ignores a forged abort and takes the genuine reply after it'
      : 'takes a forged abort: the broker is the trust boundary',
    async () => {
      const id = await start('held');
      const request = await eventually('the held request', () =>
        held.find((message) => String(message.properties.correlationId).startsWith(id)),
      );
      const token = request.properties.headers?.[TOKEN_HEADER];
      expect(String(token)).toMatch(/^swt1\./);
      const correlationId = String(request.properties.correlationId);

      publishReply(correlationId, { reason: 'forged' }, { type: 'abort' });
      publishReply(
        correlationId,
        { answered: 'genuinely' },
        { headers: { [TOKEN_HEADER]: token, 'x-attempt': 1 } },
      );

      const ended = await eventually(`job ${id} to end`, async () => {
        const document = await job(id);
        return document.status === 'running' ? undefined : document;
      });
      if (auth) {
        expect([ended.status, ended.result]).toEqual(['completed', { answered: 'genuinely' }]);
        expect(
          await counter('switchyard_replies_ignored_total', { reason: 'unauthenticated' }),
        ).toBeGreaterThanOrEqual(1);
      } else {
        expect(ended.status).toBe('aborted');
      }
    },
  );

  it(`sends a request again ${auth ? 'never' : 'at most once'} for 500 forged "expired" dead letters`, async () => {
    const id = await start('held');
    const request = await eventually('the held request', () =>
      held.find((message) => String(message.properties.correlationId).startsWith(id)),
    );
    const correlationId = String(request.properties.correlationId);
    const deadLetters = `${serve.replyQueue}.dead-letters`;
    for (let n = 0; n < 500; n++) {
      inspector.channel.sendToQueue(deadLetters, Buffer.from('{}'), {
        correlationId,
        replyTo: serve.replyQueue,
        headers: { 'x-attempt': 1, 'x-death': [{ reason: 'expired', queue: heldQueue, count: 1 }] },
      });
    }
    await eventually('the dead letters taken', async () => (await queueCounts(deadLetters))?.ready === 0);
    // The copies a re-send would make are in the held queue well within this.
    await eventually('the held queue empty', async () => (await queueCounts(heldQueue))?.ready === 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const copies = held.filter((message) => message.properties.correlationId === correlationId).length;
    expect(copies).toBe(1);
    const reason = auth ? 'unauthenticated' : 'not_expired';
    expect(await counter('switchyard_dead_letters_ignored_total', { reason })).toBeGreaterThanOrEqual(500);
  });
});
