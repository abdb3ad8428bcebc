import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsBus } from '../../../functions/adapters/sqs/bus.js';
import type { QueueReport } from '../../../functions/api/api-service.js';
import { type ServeHandle, startServe } from '../../../functions/local/serve.js';
import { createJsonLogger } from '../../../functions/telemetry/json-logger.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../../support/fauxqs.js';
import { deleteQueues, openTestChannel, uniqueName } from '../../support/rabbitmq.js';

const suffix = uniqueName('queues');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: pricing-${suffix}
    steps:
      - { name: load, queue: ${q('load')} }
      - { name: price, queue: ${q('pricing')}, depends: [load] }
      - { name: approve, type: signal, depends: [price] }
      - { name: lines, task: line, depends: [load] }
    tasks:
      - name: line
        itemListKey: lines
        steps:
          - { name: price-line, queue: ${q('pricing')} }
`;

describe('GET /api/queues on RabbitMQ', { timeout: 60_000 }, () => {
  let dir: string;
  let serve: ServeHandle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-queues-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    serve = await startServe({
      configFiles: [join(dir, 'workflows.yaml')],
      db: ':memory:',
      port: 0,
      replyQueue: q('replies'),
      logger: createJsonLogger({ level: 'error' }),
    });
  });

  afterAll(async () => {
    await serve?.close();
    await deleteQueues([q('replies'), q('load'), q('pricing')]);
    await rm(dir, { recursive: true, force: true });
  });

  const queues = async (): Promise<QueueReport[]> => {
    const response = await fetch(`${serve.url}/api/queues?workflow=pricing-${suffix}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { queues: QueueReport[] }).queues;
  };

  it('lists each step queue once, with the steps sending to it, its ready messages and consumers', async () => {
    // Prepare: two jobs wait in load's queue, which one consumer (prefetch 1) watches
    for (let i = 0; i < 2; i++)
      await fetch(`${serve.url}/api/workflow/pricing-${suffix}`, { method: 'POST', body: '{}' });
    const { model, channel } = await openTestChannel();
    await channel.prefetch(1);
    await channel.consume(q('pricing'), () => {});

    // Act
    const listed = await queues();

    // Assess
    expect(listed).toHaveLength(2);
    const load = listed.find((entry) => entry.queue === q('load'));
    expect(load).toMatchObject({ exists: true, consumers: 0, vhost: null });
    expect(load?.steps).toEqual([{ workflow: `pricing-${suffix}`, step: 'load' }]);
    await expect.poll(async () => (await queues()).find((e) => e.queue === q('load'))?.ready).toBe(2);
    const pricing = listed.find((entry) => entry.queue === q('pricing'));
    expect(pricing).toMatchObject({ exists: true, ready: 0, consumers: 1 });
    expect(pricing?.steps).toEqual([
      { workflow: `pricing-${suffix}`, step: 'price' },
      { workflow: `pricing-${suffix}`, task: 'line', step: 'price-line' },
    ]);
    await model.close();
  });

  it('reports a queue that does not exist as such, and does not create it', async () => {
    // Prepare
    await deleteQueues([q('pricing')]);

    // Act
    const pricing = (await queues()).find((entry) => entry.queue === q('pricing'));

    // Assess
    expect(pricing).toMatchObject({ exists: false });
    expect(pricing?.error).toBeUndefined();
    const { model, channel } = await openTestChannel();
    await expect(channel.checkQueue(q('pricing'))).rejects.toThrow(/NOT_FOUND/);
    await model.close().catch(() => {});
  });
});

describe('SqsBus.inspectQueues', { timeout: 30_000 }, () => {
  let sqs: Fauxqs;

  beforeAll(async () => {
    sqs = await startSqsEmulator();
  });

  afterAll(async () => {
    await sqs?.stop();
  });

  it('reads ApproximateNumberOfMessages, says consumers are unknown, and reports a missing queue without creating it', async () => {
    // Prepare
    const prefix = uniqueQueuePrefix();
    await createQueue(sqs.client, `${prefix}pricing`);
    const { url: replyQueueUrl } = await createQueue(sqs.client, `${prefix}replies`);
    const bus = new SqsBus({
      client: sqs.client,
      queuePrefix: prefix,
      replyQueueUrl,
      createMissingQueues: {},
    });
    const request = (n: number) => ({
      jobId: `00000000-0000-4000-8000-00000000000${n}`,
      step: 'price',
      queue: 'pricing',
      vhost: null,
      correlationId: `00000000-0000-4000-8000-00000000000${n}:price`,
      attempt: 1,
      body: { n },
    });
    await bus.send([request(1), request(2), request(3)]);

    // Act
    const health = await bus.inspectQueues([
      { queue: 'pricing', vhost: null },
      { queue: 'missing', vhost: null },
    ]);

    // Assess
    expect(health).toEqual([
      { queue: 'pricing', vhost: null, exists: true, ready: 3, inFlight: 0, consumers: 'unknown' },
      { queue: 'missing', vhost: null, exists: false, consumers: 'unknown' },
    ]);
    expect(await bus.inspectQueues([{ queue: 'missing', vhost: null }])).toMatchObject([{ exists: false }]);
  });
});
