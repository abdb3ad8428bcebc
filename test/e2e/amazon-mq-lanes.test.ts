import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import type { ChannelModel } from 'amqplib';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poisonQueueOf } from '../../functions/adapters/rabbitmq/poison-queue.js';
import { type Container, createContainer } from '../../functions/aws/container.js';
import { readHandlerEnvironment } from '../../functions/aws/environment.js';
import { parkedQueueOf } from '../../functions/aws/mq-reply-queues.js';
import { rabbitMqBusFactory } from '../../functions/aws/rabbitmq-bus-factory.js';
import { createRepliesMqHandler } from '../../functions/handlers/replies-mq.js';
import { replyQueuesOf } from '../../functions/transport/amqp/reply-shards.js';
import { type AmazonMqEventSource, amazonMqEventSource } from '../support/amazon-mq-event-source.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../support/dynamodb-local.js';
import { type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../support/fauxqs.js';
import { AMQP_URL, deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { recordingTelemetry } from '../support/recording-telemetry.js';

/*
 * The replies lane on Amazon MQ, measured: replies waiting in the reply queues, handled by the
 * replies-mq handler on DynamoDB Local through N mappings, each as Lambda runs an Amazon MQ mapping on
 * RabbitMQ (one execution environment: an invocation at a time; the stack's batch of 10 and window of
 * 1 s: test/support/amazon-mq-event-source.ts). Jobs are sharded over the N reply queues by id
 * (functions/transport/amqp/reply-shards.ts). The figures go to BENCHMARKS.md ("The replies lane on
 * Amazon MQ"); the test asserts what must hold whatever the machine: every reply applied once, every
 * mapping one invocation at a time, each queue holding only its own jobs' replies.
 */

const JOBS = 1_000;
/** The stack's mapping (infra/switchyard-stack.ts, MQ_EVENT_BATCH). */
const DEPLOYED_BATCH = { batchSize: 10, batchingWindowMs: 1_000 };

let dynamo: DynamoDbLocal;
let sqs: Fauxqs;
let tableName: string;
let timerQueueUrl: string;
let model: ChannelModel;
const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:switchyard-broker-AbCdEf';
const secrets = new SecretsManagerClient({ region: 'us-east-1' });
const declared: string[] = [];
const containers: Container[] = [];

beforeAll(async () => {
  [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
  tableName = uniqueTableName('switchyard-mq-lanes');
  await createSwitchyardTable(dynamo.client, tableName);
  ({ QueueUrl: timerQueueUrl = '' } = await sqs.client.send(
    new CreateQueueCommand({ QueueName: `${uniqueQueuePrefix('mql')}switchyard-timers` }),
  ));
  const url = new URL(AMQP_URL);
  mockClient(secrets)
    .on(GetSecretValueCommand, { SecretId: secretArn })
    .resolves({
      SecretString: JSON.stringify({
        username: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
      }),
    });
  ({ model } = await openTestChannel());
}, 120_000);

afterAll(async () => {
  for (const container of containers) {
    await container.manager.drain();
    container.manager.stop();
    await container.bus.close();
  }
  await model?.close().catch(() => {});
  await deleteQueues(declared);
  await sqs?.stop();
  await dynamo?.stop();
}, 60_000);

/** A Lambda container of the stack's functions with REPLY_QUEUES=shards. */
async function aContainer(replyQueue: string, shards: number): Promise<Container> {
  const environment = readHandlerEnvironment({
    TABLE_NAME: tableName,
    BUS: 'rabbitmq',
    REPLY_QUEUE: replyQueue,
    REPLY_QUEUES: String(shards),
    TIMER_QUEUE_URL: timerQueueUrl,
    MQ_SECRET_ARN: secretArn,
    MQ_AMQPS_ENDPOINT: `amqp://${new URL(AMQP_URL).host}`,
  });
  const container = await createContainer(environment, {
    buses: { rabbitmq: rabbitMqBusFactory },
    clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient(), secretsManager: secrets },
    telemetry: recordingTelemetry(),
  });
  containers.push(container);
  return container;
}

/** Starts JOBS one-step jobs, answers every request at once, and measures the lanes draining the replies. */
async function measureLanes(shards: number) {
  // Prepare: the jobs' requests, answered by a worker that replied to each at once.
  const replyQueue = uniqueName('workflow-manager');
  const queues = replyQueuesOf(replyQueue, shards);
  declared.push(...queues, parkedQueueOf(replyQueue), poisonQueueOf(replyQueue));
  const stepQueue = uniqueName('lane-answer');
  declared.push(stepQueue);
  const starter = await aContainer(replyQueue, shards);
  const workflow = `lanes-${shards}-${randomUUID().slice(0, 8)}`;
  await starter.manager.registerWorkflow({ name: workflow, steps: [{ name: 'answer', queue: stepQueue }] });
  const ids: string[] = [];
  for (let n = 0; n < JOBS; n += 25) {
    const started = await Promise.all(
      Array.from({ length: Math.min(25, JOBS - n) }, () => starter.manager.startJob({ workflow })),
    );
    ids.push(...started.map(({ job }) => job.id));
  }
  await starter.manager.drain();
  const channel = await model.createChannel();
  const repliedTo = new Map<string, string>();
  await eventually(
    `${JOBS} requests`,
    async () => {
      for (;;) {
        const request = await channel.get(stepQueue, { noAck: true });
        if (!request) break;
        const { correlationId, replyTo, headers } = request.properties;
        repliedTo.set(String(correlationId).split(':')[0] as string, replyTo);
        channel.sendToQueue(replyTo, Buffer.from('{"answered":true}'), {
          persistent: true,
          correlationId,
          headers: { 'x-attempt': headers?.['x-attempt'] },
        });
      }
      return repliedTo.size >= JOBS;
    },
    120_000,
  );
  await channel.close();
  const handlers = await Promise.all(
    queues.map(async () => createRepliesMqHandler({ ...(await aContainer(replyQueue, shards)), replyQueue })),
  );

  // Act: the mappings start on queues holding every reply.
  const started = Date.now();
  const sources: AmazonMqEventSource[] = [];
  for (const [n, queue] of queues.entries())
    sources.push(await amazonMqEventSource(queue, handlers[n] as (typeof handlers)[number], DEPLOYED_BATCH));
  await eventually(
    'every reply handled',
    async () => sources.reduce((sum, source) => sum + source.acknowledged, 0) >= JOBS,
    600_000,
  );
  const elapsedMs = Date.now() - started;
  for (const source of sources) await source.stop();
  const jobs = await starter.store.getJobs(ids);
  return { queues, repliedTo, sources, jobs, elapsedMs, repliesPerSecond: JOBS / (elapsedMs / 1000) };
}

describe('The replies lane on Amazon MQ (one invocation at a time per mapping, batches of 10 within 1 s)', () => {
  const figures: string[] = [];

  afterAll(() => {
    if (figures.length) console.info(`replies lane on Amazon MQ, ${JOBS} replies: ${figures.join('; ')}`);
  });

  for (const shards of [1, 4]) {
    it(`with ${shards} reply queue${shards > 1 ? 's' : ''}: every reply applied once, each mapping one invocation at a time`, async () => {
      // Act
      const { queues, repliedTo, sources, jobs, elapsedMs, repliesPerSecond } = await measureLanes(shards);
      const durations = sources.flatMap((source) => source.durations).sort((a, b) => a - b);
      const busyMs = durations.reduce((sum, ms) => sum + ms, 0);
      figures.push(
        `N=${shards}: ${(elapsedMs / 1000).toFixed(1)} s, ${repliesPerSecond.toFixed(0)} replies/s, ` +
          `${durations.length} invocations of median ${durations[Math.floor(durations.length / 2)]} ms ` +
          `(p90 ${durations[Math.floor(durations.length * 0.9)]} ms), lanes busy ${(busyMs / elapsedMs).toFixed(2)} of the time on average ` +
          `(load ${loadavg()[0]?.toFixed(1)})`,
      );

      // Assess
      expect([...jobs.values()].filter((job) => job.status === 'completed')).toHaveLength(JOBS);
      for (const source of sources) {
        expect(source.mostAtOnce).toBe(1);
        expect(source.failed).toBe(0);
      }
      // Every queue served some jobs, and each job's replies went to one queue.
      expect(new Set(repliedTo.values())).toEqual(new Set(queues));
      expect(sources.reduce((sum, source) => sum + source.acknowledged, 0)).toBe(JOBS);
    }, 900_000);
  }
});
