import { randomUUID } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import type { Channel, ChannelModel, Message } from 'amqplib';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InboundReply } from '../../engine/index.js';
import { POISONED_REASON_HEADER, poisonQueueOf } from '../../functions/adapters/rabbitmq/poison-queue.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { type Container, createContainer } from '../../functions/aws/container.js';
import { readHandlerEnvironment } from '../../functions/aws/environment.js';
import {
  AmqpReplyParking,
  declareReplyQueues,
  PARKED_REASON_HEADER,
  parkedQueueOf,
  REPLY_MAX_DELIVERIES,
} from '../../functions/aws/mq-reply-queues.js';
import { rabbitMqBusFactory } from '../../functions/aws/rabbitmq-bus-factory.js';
import { createApiHandler } from '../../functions/handlers/api.js';
import { createRegisterWorkflowsHandler } from '../../functions/handlers/register-workflows.js';
import { createRepliesMqHandler } from '../../functions/handlers/replies-mq.js';
import { MAX_CRASHES_IN_HAND, poisonedReason } from '../../functions/manager/reply-policy.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { type AmazonMqEventSource, amazonMqEventSource } from '../support/amazon-mq-event-source.js';
import {
  aCustomResourceEvent,
  aLambdaContext,
  amazonMqMessageFromAmqp,
  anApiEvent,
} from '../support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../support/dynamodb-local.js';
import { type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../support/fauxqs.js';
import { failingStore, managerDyingOn, memoryManager } from '../support/memory-manager.js';
import { AMQP_URL, deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { recordingTelemetry } from '../support/recording-telemetry.js';

/*
 * Amazon MQ for RabbitMQ, simulated with the local RabbitMQ: replies published by workers as they
 * would be, taken off the queue raw, and handed to the replies-mq handler in the event shape the
 * Lambda guide documents (base64 `data`, `basicProperties`, long-string headers as bytes).
 */

const declared: string[] = [];

/** Takes `count` messages off `queue` without acknowledging them. */
async function take(channel: Channel, queue: string, count: number): Promise<Message[]> {
  const messages: Message[] = [];
  await eventually(`${count} messages on ${queue}`, async () => {
    const message = await channel.get(queue, { noAck: false });
    if (message) messages.push(message);
    return messages.length >= count;
  });
  return messages;
}

describe('Amazon MQ events built from real RabbitMQ messages', () => {
  let model: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    ({ model, channel } = await openTestChannel());
  });

  afterAll(async () => {
    await model.close().catch(() => {});
  });

  it('hands the manager the correlation id, type, attempt and body of every reply', async () => {
    // Prepare: replies as workers publish them (the SDK's number header, a string one, a heartbeat).
    const queue = uniqueName('mq-replies');
    declared.push(queue);
    await channel.assertQueue(queue, { durable: true });
    const jobId = randomUUID();
    const publish = (body: string, options: Parameters<Channel['sendToQueue']>[2]) =>
      channel.sendToQueue(queue, Buffer.from(body), { persistent: true, ...options });
    publish('{"count":3}', { correlationId: `${jobId}:count`, headers: { 'x-attempt': 1 } });
    publish('{"error":"no words"}', {
      correlationId: `${jobId}:count`,
      type: 'error',
      headers: { 'x-attempt': '2', 'x-worker': 'python' },
    });
    publish('', { correlationId: `${jobId}:count`, type: 'heartbeat' });
    publish('{}', {});
    const messages = await take(channel, queue, 4);
    const event = {
      eventSource: 'aws:rmq' as const,
      eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:switchyard:b-1',
      rmqMessagesByQueue: { [`${queue}::/`]: messages.map(amazonMqMessageFromAmqp) },
    };
    const harness = memoryManager();
    const handleReplies = vi.spyOn(harness.manager, 'handleReplies');

    // Act
    await createRepliesMqHandler(harness)(event, aLambdaContext());
    channel.nackAll(false);

    // Assess
    expect(event.rmqMessagesByQueue[`${queue}::/`]?.[1]?.basicProperties.headers).toEqual({
      'x-attempt': { bytes: [50] },
      'x-worker': { bytes: [...Buffer.from('python')] },
    });
    const replies: InboundReply[] = [
      { correlationId: `${jobId}:count`, body: '{"count":3}', attempt: 1 },
      {
        correlationId: `${jobId}:count`,
        body: '{"error":"no words"}',
        type: 'error',
        attempt: 2,
        worker: 'python',
      },
      { correlationId: `${jobId}:count`, body: '', type: 'heartbeat' },
      { body: '{}' },
    ];
    expect(handleReplies.mock.calls).toEqual([[replies]]);
    expect(harness.telemetry.counted('replies_malformed_total')).toBe(1);
  });
});

describe('A job through replies-mq, dispatched by the RabbitMQ bus (the local RabbitMQ for Amazon MQ)', () => {
  let dynamo: DynamoDbLocal;
  let sqs: Fauxqs;
  let container: Container;
  let replyQueue: string;
  let model: ChannelModel;
  const workers: Worker[] = [];
  let eventSource: AmazonMqEventSource | undefined;

  beforeAll(async () => {
    [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
    const tableName = uniqueTableName('switchyard-mq');
    await createSwitchyardTable(dynamo.client, tableName);
    const { QueueUrl: timerQueueUrl } = await sqs.client.send(
      new CreateQueueCommand({ QueueName: `${uniqueQueuePrefix('mq')}switchyard-timers` }),
    );
    replyQueue = uniqueName('workflow-manager');
    declared.push(replyQueue, parkedQueueOf(replyQueue), poisonQueueOf(replyQueue));
    const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:switchyard-broker-AbCdEf';
    const secrets = new SecretsManagerClient({ region: 'us-east-1' });
    const url = new URL(AMQP_URL);
    mockClient(secrets)
      .on(GetSecretValueCommand, { SecretId: secretArn })
      .resolves({
        SecretString: JSON.stringify({
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        }),
      });
    const environment = readHandlerEnvironment({
      TABLE_NAME: tableName,
      BUS: 'rabbitmq',
      REPLY_QUEUE: replyQueue,
      TIMER_QUEUE_URL: timerQueueUrl,
      MQ_SECRET_ARN: secretArn,
      // Amazon MQ gives amqps://…:5671; the local broker speaks plain AMQP.
      MQ_AMQPS_ENDPOINT: `amqp://${url.host}`,
    });
    container = await createContainer(environment, {
      buses: { rabbitmq: rabbitMqBusFactory },
      clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient(), secretsManager: secrets },
      telemetry: recordingTelemetry(),
    });
    ({ model } = await openTestChannel());
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await eventSource?.stop();
    await container?.manager.drain();
    container?.manager.stop();
    await container?.bus.close();
    await model?.close().catch(() => {});
    await deleteQueues(declared);
    await sqs?.stop();
    await dynamo?.stop();
  }, 60_000);

  it('registers (declaring the reply queue), runs a fan-out job and completes it', async () => {
    // Prepare
    const queues = { hello: uniqueName('hello'), each: uniqueName('greet-one'), bye: uniqueName('bye') };
    declared.push(...Object.values(queues));
    const workflow = {
      name: `mq-greetings-${randomUUID().slice(0, 8)}`,
      steps: [
        { name: 'hello', queue: queues.hello },
        { name: 'greet-all', task: 'greet-each', depends: ['hello'] },
        { name: 'bye', queue: queues.bye, depends: ['greet-all'] },
      ],
      tasks: [
        { name: 'greet-each', itemListKey: 'names', steps: [{ name: 'greet-one', queue: queues.each }] },
      ],
    };
    await createRegisterWorkflowsHandler({ ...container, replyQueue })(
      aCustomResourceEvent('Create', [workflow]),
    );
    const check = await model.createChannel();
    await check.checkQueue(replyQueue);
    await check.close();
    const logger = { info() {}, warn: console.warn, error: console.error };
    workers.push(
      createWorker({
        queue: queues.hello,
        amqpUrl: AMQP_URL,
        logger,
        handler: () => ({ names: Array.from({ length: 25 }, (_, n) => `guest-${n}`) }),
      }),
      createWorker({
        queue: queues.each,
        amqpUrl: AMQP_URL,
        logger,
        concurrency: 5,
        handler: (input) => ({ name: `hello, ${String(input.name)}` }),
      }),
      createWorker({
        queue: queues.bye,
        amqpUrl: AMQP_URL,
        logger,
        handler: (input) => ({
          greeted: (input.names as string[]).length,
          last: (input.names as string[]).at(-1) ?? null,
        }),
      }),
    );
    await Promise.all(workers.map((worker) => worker.start()));
    // Every third batch is delivered twice.
    eventSource = await amazonMqEventSource(replyQueue, createRepliesMqHandler(container), {
      deliverTwiceEvery: 3,
    });
    const api = createApiHandler({ ...container, maxBodyBytes: 256 * 1024 });

    // Act
    const started = await api(anApiEvent('POST', `/api/workflow/${workflow.name}`, { body: {} }));
    const { id } = JSON.parse(started.body) as { id: string };
    const job = await eventually(
      `job ${id} to finish`,
      async () => {
        const answer = await api(anApiEvent('GET', `/api/job/${id}`, { query: { wait: '2' } }));
        const document = JSON.parse(answer.body) as JobDocument;
        return document.status === 'running' ? undefined : document;
      },
      60_000,
    );

    // Assess
    expect(started.statusCode).toBe(201);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ greeted: 25, last: 'hello, guest-24' });
    expect(job.steps['greet-all']).toMatchObject({ children: 25, childrenDone: 25 });
    expect(eventSource?.redelivered).toBeGreaterThan(0);
  }, 90_000);
});

describe('replies-mq on a quorum reply queue (real RabbitMQ): a reply that always fails never stalls the others', () => {
  const workflow = {
    name: 'greet',
    steps: [
      { name: 'hello', retries: 1 },
      { name: 'bye', depends: ['hello'] },
    ],
  };
  let model: ChannelModel;
  let channel: Channel;
  let parking: AmqpReplyParking;

  beforeAll(async () => {
    ({ model, channel } = await openTestChannel());
  });

  afterAll(async () => {
    await parking?.close();
    await model.close().catch(() => {});
    await deleteQueues(declared);
  });

  async function scenario() {
    const replyQueue = uniqueName('workflow-manager');
    declared.push(replyQueue, parkedQueueOf(replyQueue), poisonQueueOf(replyQueue));
    await declareReplyQueues(model, replyQueue, recordingTelemetry().logger);
    const base = memoryManager();
    await base.manager.registerWorkflow(workflow);
    const jobs: string[] = [];
    for (let n = 0; n < 4; n++) jobs.push((await base.manager.startJob({ workflow: 'greet' })).job.id);
    await base.manager.drain();
    const poisoned = jobs[0] as string;
    // The store cannot read the poisoned job: neither its reply nor a failed attempt can be stored.
    const store = failingStore(base.store, ['getJobs', 'getJob'], (args) =>
      JSON.stringify(args).includes(poisoned),
    );
    const harness = memoryManager({ store });
    parking = new AmqpReplyParking(AMQP_URL, replyQueue);
    const handler = createRepliesMqHandler({ ...harness, parking, replyQueue });
    const publish = (jobId: string) =>
      channel.sendToQueue(replyQueue, Buffer.from('{"greeting":"hi"}'), {
        persistent: true,
        correlationId: `${jobId}:hello`,
        headers: { 'x-attempt': 1 },
      });
    const byes = () =>
      harness.bus.sent
        .filter((request) => request.step === 'bye')
        .map((r) => r.jobId)
        .sort();
    return { replyQueue, jobs, poisoned, base, store, harness, handler, publish, byes };
  }

  it('parks the failing reply of a mixed batch at once, and applies the rest', async () => {
    // Prepare
    const { replyQueue, jobs, poisoned, handler, publish, byes } = await scenario();
    for (const job of jobs) publish(job);

    // Act
    const source = await amazonMqEventSource(replyQueue, handler);
    await eventually('the good replies applied', async () => byes().length === 3);
    const [parked] = await take(channel, parkedQueueOf(replyQueue), 1);
    await eventually(
      'the batch acknowledged',
      async () => (await channel.checkQueue(replyQueue)).messageCount === 0,
    );
    await source.stop();

    // Assess
    expect(byes()).toEqual(jobs.slice(1).sort());
    expect(source.failed).toBe(0);
    expect(parked?.properties.correlationId).toBe(`${poisoned}:hello`);
    expect(parked?.properties.headers?.['x-attempt']).toBe(1);
    expect(String(parked?.properties.headers?.[PARKED_REASON_HEADER])).toMatch(/the store is unavailable/);
    channel.nackAll(true);
  }, 60_000);

  it('a failing reply alone in its batches reaches the delivery limit and is parked by the broker; later replies go through; the drain applies it once the store recovers', async () => {
    // Prepare
    const { replyQueue, jobs, poisoned, base, store, handler, publish, byes } = await scenario();
    publish(poisoned);

    // Act: the handler hands the poisoned reply back until the broker parks it.
    const source = await amazonMqEventSource(replyQueue, handler);
    const [parked] = await take(channel, parkedQueueOf(replyQueue), 1);
    for (const job of jobs.slice(1)) publish(job);
    await eventually('the replies behind it applied', async () => byes().length === 3);
    await source.stop();
    // The store recovers; the parked queue's own mapping drains it.
    store.outage = false;
    const drained = memoryManager({ store: base.store });
    await createRepliesMqHandler({ ...drained, replyQueue })(
      {
        eventSource: 'aws:rmq',
        eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:switchyard:b-1',
        rmqMessagesByQueue: {
          [`${parkedQueueOf(replyQueue)}::/`]: [amazonMqMessageFromAmqp(parked as Message)],
        },
      },
      aLambdaContext(),
    );
    channel.ack(parked as Message);

    // Assess
    expect(source.failed).toBe(REPLY_MAX_DELIVERIES);
    const deaths = parked?.properties.headers?.['x-death'] as { reason: string; queue: string }[];
    expect(deaths[0]).toMatchObject({ reason: 'delivery_limit', queue: replyQueue });
    expect(byes()).toEqual(jobs.slice(1).sort());
    // The parked reply, applied late, completes its step like any reply.
    expect(drained.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([
      poisoned,
    ]);
  }, 60_000);
});

describe('replies-mq when invocations die with a reply in hand (real RabbitMQ, quorum reply queue)', () => {
  const workflow = {
    name: 'greet',
    steps: [
      { name: 'hello', retries: 2 },
      { name: 'bye', depends: ['hello'] },
    ],
  };
  let model: ChannelModel;
  let channel: Channel;
  let parking: AmqpReplyParking | undefined;
  const queues: string[] = [];

  beforeAll(async () => {
    ({ model, channel } = await openTestChannel());
  });

  afterAll(async () => {
    await parking?.close();
    await model.close().catch(() => {});
    await deleteQueues(queues);
  });

  it('poisons the reply after 3 or 4 deaths: its attempt fails naming why, it waits in <reply queue>.poisoned, and the reply batched with it is applied', async () => {
    // Prepare: the mapping's invocations run out of time on one reply (the simulation's stand-in for
    // a function that cannot finish it: out of time or of memory); each death, a new container.
    const replyQueue = uniqueName('workflow-manager');
    queues.push(replyQueue, parkedQueueOf(replyQueue), poisonQueueOf(replyQueue));
    await declareReplyQueues(model, replyQueue, recordingTelemetry().logger);
    const harness = memoryManager();
    await harness.manager.registerWorkflow(workflow);
    const victim = (await harness.manager.startJob({ workflow: 'greet' })).job.id;
    const bystander = (await harness.manager.startJob({ workflow: 'greet' })).job.id;
    await harness.manager.drain();
    parking = new AmqpReplyParking(AMQP_URL, replyQueue);
    const dying = managerDyingOn(harness.manager, (reply) => reply.body.includes('"unfinishable"'));
    const aContainer = () => createRepliesMqHandler({ ...harness, manager: dying, parking, replyQueue });
    const publish = (jobId: string, body: string) =>
      channel.sendToQueue(replyQueue, Buffer.from(body), {
        persistent: true,
        correlationId: `${jobId}:hello`,
        headers: { 'x-attempt': 1 },
      });

    // Act
    publish(victim, '{"unfinishable": true}');
    publish(bystander, '{"fine": true}');
    const source = await amazonMqEventSource(replyQueue, aContainer(), {
      newHandler: aContainer,
      functionTimeoutMs: 2_000,
    });
    await eventually(
      'the victim to fail',
      async () => (await harness.store.getJob(victim))?.status === 'failed',
      60_000,
    );
    const [kept] = await take(channel, poisonQueueOf(replyQueue), 1);
    await eventually(
      'the reply queue to be empty',
      async () => (await channel.checkQueue(replyQueue)).messageCount === 0,
    );
    await source.stop();
    channel.nackAll(true);

    // Assess
    // The batch it came in, perhaps the batch it came back in, then twice alone.
    expect(source.deaths).toBeGreaterThanOrEqual(MAX_CRASHES_IN_HAND + 1);
    expect(source.deaths).toBeLessThanOrEqual(MAX_CRASHES_IN_HAND + 2);
    expect(await harness.store.getJob(victim)).toMatchObject({
      status: 'failed',
      error: { step: 'hello', attempt: 1, message: poisonedReason(MAX_CRASHES_IN_HAND) },
    });
    expect(kept?.content.toString()).toBe('{"unfinishable": true}');
    expect(kept?.properties.correlationId).toBe(`${victim}:hello`);
    expect(String(kept?.properties.headers?.[POISONED_REASON_HEADER])).toBe(
      poisonedReason(MAX_CRASHES_IN_HAND),
    );
    expect(harness.bus.sent.filter((request) => request.step === 'bye').map((r) => r.jobId)).toEqual([
      bystander,
    ]);
    expect((await channel.checkQueue(parkedQueueOf(replyQueue))).messageCount).toBe(0);
  }, 120_000);
});
