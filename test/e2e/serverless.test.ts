import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflows, type WorkflowDefinition } from '../../engine/index.js';
import { startOrderWorkers } from '../../examples/order-pipeline/workers.js';
import { wordCountLambdaWorkers } from '../../examples/word-counts/lambda-workers.js';
import { startWordCountWorkers } from '../../examples/word-counts/workers.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { type Container, createContainer } from '../../functions/aws/container.js';
import { readHandlerEnvironment } from '../../functions/aws/environment.js';
import { sqsBusFactory } from '../../functions/aws/sqs-bus-factory.js';
import { POISONED_REASON_ATTRIBUTE, SqsReplyPoisonQueue } from '../../functions/aws/sqs-poison-queue.js';
import { createApiHandler } from '../../functions/handlers/api.js';
import { createDeadLettersHandler } from '../../functions/handlers/dead-letters.js';
import { createJobEventsHandler } from '../../functions/handlers/job-events.js';
import { createRegisterWorkflowsHandler } from '../../functions/handlers/register-workflows.js';
import { createRepliesSqsHandler } from '../../functions/handlers/replies-sqs.js';
import { createTimersHandler } from '../../functions/handlers/timers.js';
import { MAX_CRASHES_IN_HAND, poisonedReason } from '../../functions/manager/reply-policy.js';
import { createWorker, suspend, type Worker, type WorkerTransport } from '../../functions/worker/index.js';
import { lambdaWorker } from '../../functions/worker/lambda/index.js';
import { SqsWorkerTransport } from '../../functions/worker/transports/sqs.js';
import { DEPLOYED_FAN_OUT_SLICE, FUNCTION_SIZES } from '../../infra/function-sizes.js';
import {
  type ApiEventOptions,
  aCustomResourceEvent,
  aLambdaContext,
  anApiEvent,
  aScheduledEvent,
} from '../support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../support/dynamodb-local.js';
import { type DynamoDbStreamSource, startDynamoDbStreamSource } from '../support/dynamodb-stream-source.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../support/fauxqs.js';
import { managerDyingOn } from '../support/memory-manager.js';
import {
  expectOrderOutcomes,
  jobIdsOf,
  type OrderApi,
  orderPipelineYaml,
  runOrders,
} from '../support/order-pipeline.js';
import { eventually } from '../support/rabbitmq.js';
import { type RecordingTelemetry, recordingTelemetry } from '../support/recording-telemetry.js';
import { runawayWorkflows } from '../support/runaway-tree.js';
import { type SqsEventSource, startSqsEventSource } from '../support/sqs-event-source.js';

/*
 * The serverless simulation: the Lambda handlers on DynamoDB Local and fauxqs, both spoken to on
 * their wire protocols. API Gateway is played by API events handed to the API handler; Lambda's SQS
 * event source by pollers that feed the reply, timer and dead-letter handlers real SQS batches, several
 * at once, each lane in a container of its own (as concurrent Lambda instances are); the workers are
 * the SDK's, on its SQS transport.
 */

const REPLY_LANES = 4;
const FAN_OUT = 10_000;

const EXTRA_WORKFLOWS = `
workflows:
  - name: fan-out-squares
    steps:
      - name: list-numbers
      - name: square-all
        task: square-each
        depends: [list-numbers]
      - name: sum-squares
        depends: [square-all]
    tasks:
      - name: square-each
        itemListKey: numbers
        steps:
          - name: square
  - name: patience
    steps:
      - name: patient-step
        # Long enough for the second attempt's round trip on a loaded machine (7 s runs were seen).
        timeout: 5s
        retries: 1
  - name: nap
    steps:
      - name: shape
        output: '{"napper": input.who}'
      - name: doze
        depends: [shape]
        sleep: 2s
  - name: dead-end
    steps:
      - name: dead-end-step
  - name: pausable
    steps:
      - name: pause-each
        task: pause-item
    tasks:
      - name: pause-item
        itemListKey: items
        concurrency: 3
        steps:
          - name: pause-work
  - name: limited-pair
    maxRunning: 2
    steps:
      - name: limited-work
  - name: webhook-then-wait
    steps:
      - name: send-webhook
      - name: webhook-answer
        type: signal
        timeout: 5m
        depends: [send-webhook]
  - name: suspend-then-wait
    steps:
      - name: call-partner
`;

let dynamo: DynamoDbLocal;
let sqs: Fauxqs;
let prefix: string;
let environment: ReturnType<typeof readHandlerEnvironment>;
let queues: { reply: string; timers: string; stepDlq: string };
let arns: { reply: string; timers: string; stepDlq: string };
const containers: { container: Container; telemetry: RecordingTelemetry }[] = [];
const sources: SqsEventSource[] = [];
let jobEventsSource: DynamoDbStreamSource | undefined;
const workers: Worker[] = [];
let api: ReturnType<typeof createApiHandler>;
let timersContainer: Container;
let dataDir: string;

/** A Lambda container: its own clients, store, bus and manager, as each concurrent instance has. */
async function newContainer(env = environment): Promise<Container> {
  const telemetry = recordingTelemetry();
  const container = await createContainer(env, {
    buses: { sqs: sqsBusFactory },
    clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient() },
    telemetry,
  });
  containers.push({ container, telemetry });
  return container;
}

async function call(method: string, path: string, options?: ApiEventOptions) {
  return callOn(api, method, path, options);
}

/** A call to one API function instance (of several running at once). */
async function callOn(
  handler: ReturnType<typeof createApiHandler>,
  method: string,
  path: string,
  options?: ApiEventOptions,
) {
  const result = await handler(anApiEvent(method, path, options), aLambdaContext(29_000));
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

/** Every job of these workflows (top-level and children) of a status, counted through the API. */
async function countJobs(workflows: readonly string[], status = 'all'): Promise<number> {
  let count = 0;
  for (const workflow of workflows) {
    let cursor: string | undefined;
    do {
      const query: Record<string, string> = { workflow, status, children: '1', limit: '1000' };
      if (cursor) query.cursor = cursor;
      const { body } = await call('GET', '/api/jobs', { query });
      count += (body.jobs as string[]).length;
      cursor = body.cursor as string | undefined;
    } while (cursor);
  }
  return count;
}

/** Whether every job of these workflows has ended (none running or paused). */
async function allEnded(workflows: readonly string[]): Promise<boolean> {
  return (await countJobs(workflows, 'running')) + (await countJobs(workflows, 'paused')) === 0;
}

/**
 * Registers, through the API, two workflows that fan out to 3 children that each call the other:
 * a tree that grows without end from one start, as fast as the manager makes jobs (issue 28).
 */
async function registerRunaway(a: string, b: string): Promise<void> {
  for (const { name, definition } of runawayWorkflows([a, b])) {
    const registered = await call('PUT', `/api/workflow/${name}`, {
      body: definition,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(registered.status).toBe(201);
  }
}

const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'aborted']);

async function finished(id: string, timeoutMs: number): Promise<JobDocument> {
  return eventually(
    `job ${id} to finish`,
    async () => {
      const { body } = await call('GET', `/api/job/${id}`, { query: { wait: '2' } });
      const job = body as unknown as JobDocument;
      // `waiting` (a step waits for someone) and `pending` are listed statuses of jobs that have not ended.
      return ENDED.has(job.status) ? job : undefined;
    },
    timeoutMs,
  );
}

/** Whether the reply poller has delivered a reply twice yet. */
let pollerDuplicatedOne = false;

/** Some replies, chosen by a hash of their correlation id (the same ones whichever lane sees them). */
function chosen(correlationId: string | undefined, percent: number): boolean {
  if (!correlationId) return false;
  return (createHash('sha256').update(correlationId).digest()[0] as number) < (256 * percent) / 100;
}

/** The SDK's SQS transport, replying twice to some requests (a worker that retried a reply it thought lost). */
function duplicatingTransport(client: SQSClient, counter: { count: number }): WorkerTransport {
  const inner = new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 });
  return {
    consume: (queue, concurrency, onDelivery) => inner.consume(queue, concurrency, onDelivery),
    reply: async (replyTo, correlationId, body, options) => {
      await inner.reply(replyTo, correlationId, body, options);
      // The first reply always, so that the test never depends on which ids the run drew.
      if (counter.count === 0 || chosen(`${correlationId}/worker`, 30)) {
        counter.count++;
        await inner.reply(replyTo, correlationId, body, options);
      }
    },
    stopConsuming: () => inner.stopConsuming(),
    close: () => inner.close(),
  };
}

/** What the job-events function put on EventBridge (played by aws-sdk-client-mock), in order. */
const putEvents: PutEventsRequestEntry[] = [];

/** The stack's filter on the stream (infra/constructs/job-events.ts): writes of job heads. */
const jobHeadWrites = (record: DynamoDBRecord): boolean =>
  (record.eventName === 'INSERT' || record.eventName === 'MODIFY') && record.dynamodb?.Keys?.sk?.S === 'J';

beforeAll(async () => {
  [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
  const tableName = uniqueTableName('switchyard-e2e');
  const streamArn = await createSwitchyardTable(dynamo.client, tableName, { stream: true });
  if (!streamArn) throw new Error('DynamoDB Local gave the table no stream');
  // The job-events function on the table's stream, as deployed; EventBridge records what it is given.
  const eventBridge = new EventBridgeClient({ region: 'us-east-1' });
  mockClient(eventBridge)
    .on(PutEventsCommand)
    .callsFake((input: { Entries: PutEventsRequestEntry[] }) => {
      putEvents.push(...input.Entries);
      return { FailedEntryCount: 0, Entries: input.Entries.map((_, n) => ({ EventId: `event-${n}` })) };
    });
  const jobEventsTelemetry = recordingTelemetry();
  jobEventsSource = startDynamoDbStreamSource({
    endpoint: dynamo.endpoint,
    streamArn,
    filter: jobHeadWrites,
    handler: createJobEventsHandler({
      events: eventBridge,
      source: 'switchyard.Switchyard-e2e',
      stack: 'Switchyard-e2e',
      logger: jobEventsTelemetry.logger,
    }),
  });
  prefix = uniqueQueuePrefix('e2e');
  // The stack's own queues (infra/constructs/sqs-bus.ts, timers.ts); step queues come with registration.
  const replyDlq = await createQueue(sqs.client, `${prefix}workflow-manager-dlq`);
  const reply = await createQueue(sqs.client, `${prefix}workflow-manager`, {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: replyDlq.arn, maxReceiveCount: 10 }),
  });
  const stepDlq = await createQueue(sqs.client, `${prefix}switchyard-steps-dlq`);
  const timersDlq = await createQueue(sqs.client, `${prefix}switchyard-timers-dlq`);
  const timers = await createQueue(sqs.client, `${prefix}switchyard-timers`, {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: timersDlq.arn, maxReceiveCount: 10 }),
  });
  queues = { reply: reply.url, timers: timers.url, stepDlq: stepDlq.url };
  arns = { reply: reply.arn, timers: timers.arn, stepDlq: stepDlq.arn };
  environment = readHandlerEnvironment({
    TABLE_NAME: tableName,
    BUS: 'sqs',
    QUEUE_PREFIX: prefix,
    REPLY_QUEUE: 'workflow-manager',
    REPLY_QUEUE_URL: reply.url,
    TIMER_QUEUE_URL: timers.url,
    DEAD_LETTER_QUEUE_URL: stepDlq.url,
    STEP_QUEUE_DLQ_ARN: stepDlq.arn,
    STEP_QUEUE_VISIBILITY_TIMEOUT: '30',
    LOG_LEVEL: 'INFO',
    // As deployed: at most a thousand children a slice, fewer when the invocation's time runs short.
    FAN_OUT_SLICE: String(DEPLOYED_FAN_OUT_SLICE),
  });

  // Deploy: the custom resource registers the example's workflows and creates their step queues.
  const registrar = await newContainer();
  const definitions: WorkflowDefinition[] = [
    ...loadWorkflows(await readFile('examples/word-counts/workflows.yaml', 'utf8')).workflows,
    ...loadWorkflows(EXTRA_WORKFLOWS).workflows,
    ...loadWorkflows(await orderPipelineYaml()).workflows,
  ];
  const registered = await createRegisterWorkflowsHandler(registrar)(
    aCustomResourceEvent('Create', definitions),
  );
  expect(registered.Data?.Versions).toBe(
    [
      'book-word-counts@1,fan-out-squares@1,patience@1,nap@1,dead-end@1,pausable@1,limited-pair@1,webhook-then-wait@1,suspend-then-wait@1',
      'order-pipeline@1,shipping@1,order-failed@1',
    ].join(','),
  );

  api = createApiHandler({ ...(await newContainer()), maxBodyBytes: environment.maxBodyBytes });
  const replyHandlers = [];
  const repliesFunction = async () => createRepliesSqsHandler(await newContainer());
  for (let lane = 0; lane < REPLY_LANES; lane++) replyHandlers.push(await repliesFunction());
  sources.push(
    startSqsEventSource({
      client: sqs.newClient(),
      queueUrl: queues.reply,
      queueArn: arns.reply,
      handlers: replyHandlers,
      // The deployed function's timeout, enforced: an invocation that overruns it fails, and its lane
      // goes on in a new container, as on Lambda.
      functionTimeoutMs: FUNCTION_SIZES.replies.timeoutSeconds * 1000,
      newHandler: repliesFunction,
      // The stack gathers replies for up to 1 s (maxBatchingWindow); shortened here. Without a
      // window, a loaded machine hands every reply over alone and no batch is ever tested.
      maxBatchingWindowMs: 250,
      // At-least-once: some replies are delivered twice, the second time in another batch. The
      // first one always: with a job's few replies, 20 % of random ids can be none (about 3 % of runs).
      duplicate: (record) => {
        if (!pollerDuplicatedOne) {
          pollerDuplicatedOne = true;
          return true;
        }
        return chosen(`${record.messageAttributes.correlation_id?.stringValue}/poller`, 20);
      },
    }),
  );
  timersContainer = await newContainer();
  sources.push(
    startSqsEventSource({
      client: sqs.newClient(),
      queueUrl: queues.timers,
      queueArn: arns.timers,
      handlers: [createTimersHandler(timersContainer)],
      functionTimeoutMs: FUNCTION_SIZES.timers.timeoutSeconds * 1000,
    }),
  );
  sources.push(
    startSqsEventSource({
      client: sqs.newClient(),
      queueUrl: queues.stepDlq,
      queueArn: arns.stepDlq,
      handlers: [createDeadLettersHandler(await newContainer())],
    }),
  );
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-e2e-'));
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await Promise.all(sources.map((source) => source.stop()));
  await jobEventsSource?.stop();
  for (const { container } of containers) {
    await container.manager.drain();
    container.manager.stop();
  }
  await sqs?.stop();
  await dynamo?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('Serverless simulation (DynamoDB Local, fauxqs, Lambda handlers, SDK workers on SQS)', () => {
  it('counts the words of the example book, whatever is duplicated on the way', async () => {
    // Prepare
    const workerDuplicates = { count: 0 };
    const client = sqs.newClient();
    workers.push(
      ...(await startWordCountWorkers({
        dataDir,
        transport: () => duplicatingTransport(client, workerDuplicates),
      })),
    );
    const id = randomUUID();
    const start = (): Promise<{ status: number; body: Record<string, unknown> }> =>
      call('POST', '/api/workflow/book-word-counts', { query: { id }, body: {} });

    // Act
    const first = await start();
    const second = await start();
    const job = await finished(id, 120_000);

    // Assess
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(job.status).toBe('completed');
    const result = job.result as { chapters: number; tokens: number; distinct: number; top: unknown[] };
    expect(result).toMatchObject({ chapters: 12, tokens: 29_371, distinct: 5_947 });
    expect(result.top[0]).toEqual({ word: 'the', count: 1_673 });
    for (const [name, step] of Object.entries(job.steps)) expect(step.attempt, name).toBeLessThanOrEqual(1);
    expect(job.steps['section-counts']).toMatchObject({ children: 12, childrenDone: 12 });
    // The duplicates did happen, and were ignored.
    const [replies] = sources;
    expect(replies?.stats.duplicated).toBeGreaterThan(0);
    expect(workerDuplicates.count).toBeGreaterThan(0);
    const ignored = containers.reduce(
      (sum, { telemetry }) => sum + telemetry.counted('replies_ignored_total'),
      0,
    );
    expect(ignored).toBeGreaterThanOrEqual(workerDuplicates.count);
    expect(replies?.stats.largestBatch).toBeGreaterThan(1);
    // The table's stream took the job's status changes to EventBridge, in order, once each.
    const statuses = await eventually(
      `job ${id}'s completion on EventBridge`,
      async () => {
        const seen = putEvents
          .filter((entry) => entry.DetailType === 'Switchyard Job Status Change')
          .map((entry) => JSON.parse(entry.Detail ?? '{}'))
          .filter((detail) => detail.jobId === id);
        return seen.some((detail) => detail.status === 'completed') ? seen : undefined;
      },
      30_000,
    );
    // Started and sent its first request in one commit: created running.
    expect(statuses.map((detail) => [detail.previousStatus, detail.status])).toEqual([
      [null, 'running'],
      ['running', 'completed'],
    ]);
    expect(statuses.at(-1)).toMatchObject({
      workflow: 'book-word-counts',
      namespace: 'default',
      parentId: null,
    });
    const children = putEvents
      .map((entry) => JSON.parse(entry.Detail ?? '{}'))
      .filter((detail) => detail.parentId === id && detail.status === 'completed');
    expect(children).toHaveLength(12);
  }, 180_000);

  it('counts the words with the workers as Lambda functions, fed by SQS event sources', async () => {
    // Prepare: the example's workflow on queues of its own, registered after the deploy (the API
    // creates them), each served by the example's Lambda workers as Lambda's event source runs them.
    const definition = (await readFile('examples/word-counts/workflows.yaml', 'utf8'))
      .replace('name: book-word-counts', 'name: book-word-counts-on-lambda')
      .replace(
        /^( +)- name: (book-split|segment-word-counts|sum-splits|store-title)$/gm,
        '$1- name: $2\n$1  queue: lambda-$2',
      );
    const registered = await call('PUT', '/api/workflow/book-word-counts-on-lambda', {
      body: definition,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(registered.status).toBe(201);
    const queueUrl = (queue: string) =>
      `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${prefix}${queue}`;
    const queueArn = (queue: string) =>
      `${arns.reply.slice(0, arns.reply.lastIndexOf(':') + 1)}${prefix}${queue}`;
    const logger = { info() {}, warn: console.warn, error: console.error };
    // Each lane is a container of its own: its own client and its own instance of the function.
    const lane = () => wordCountLambdaWorkers({ client: sqs.newClient(), logger });
    const lanes = { 'book-split': 1, 'segment-word-counts': 3, 'sum-splits': 1, 'store-title': 1 } as const;
    const lambdaSources = Object.entries(lanes).map(([queue, count]) =>
      startSqsEventSource({
        client: sqs.newClient(),
        queueUrl: queueUrl(`lambda-${queue}`),
        queueArn: queueArn(`lambda-${queue}`),
        handlers: Array.from({ length: count }, () => lane()[queue as keyof typeof lanes]),
        maxBatchingWindowMs: 250,
        // At-least-once: some requests are handled twice.
        duplicate: (record) => chosen(`${record.messageAttributes.correlation_id?.stringValue}/lambda`, 20),
      }),
    );
    sources.push(...lambdaSources);

    // Act
    const { body } = await call('POST', '/api/workflow/book-word-counts-on-lambda', { body: {} });
    const job = await finished(body.id as string, 120_000);
    await Promise.all(lambdaSources.map((source) => source.stop()));

    // Assess
    expect(job.status).toBe('completed');
    const result = job.result as { chapters: number; tokens: number; distinct: number; top: unknown[] };
    expect(result).toMatchObject({ chapters: 12, tokens: 29_371, distinct: 5_947 });
    expect(result.top[0]).toEqual({ word: 'the', count: 1_673 });
    expect(job.steps['section-counts']).toMatchObject({ children: 12, childrenDone: 12 });
    const [, counting] = lambdaSources;
    expect(counting?.stats.messages).toBeGreaterThanOrEqual(12);
    expect(lambdaSources.map((source) => source.stats.failed)).toEqual([0, 0, 0, 0]);
    expect(lambdaSources.flatMap((source) => source.errors)).toEqual([]);
    // Its history, kept through DynamoDB, names who started it (the root: the stack's API key) and
    // the Lambda worker of each attempt (its x-worker SQS attribute).
    const history = await call('GET', `/api/job/${body.id as string}/events`, { query: { limit: '500' } });
    const events = (
      history.body as { events: { kind: string; step?: string; actor?: unknown; worker?: string }[] }
    ).events;
    expect(events[0]).toMatchObject({ kind: 'job.created', actor: { kind: 'root' } });
    expect(
      events.find((entry) => entry.kind === 'step.completed' && entry.step === 'book-split')?.worker,
    ).toBe(`${hostname()}:${process.pid}`);
    expect(events.at(-1)?.kind).toBe('job.completed');
  }, 180_000);

  it("fails the attempt of a Lambda worker's step that cannot finish before the function times out", async () => {
    // Prepare: a step whose handler never ends, on a function with 2 s to run.
    const registered = await call('PUT', '/api/workflow/too-slow-for-lambda', {
      body: 'name: too-slow-for-lambda\nsteps:\n  - name: endless\n    queue: lambda-endless\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(registered.status).toBe(201);
    const queue = `${prefix}lambda-endless`;
    let calls = 0;
    const source = startSqsEventSource({
      client: sqs.newClient(),
      queueUrl: `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${queue}`,
      queueArn: `${arns.reply.slice(0, arns.reply.lastIndexOf(':') + 1)}${queue}`,
      handlers: [
        lambdaWorker(
          () => {
            calls++;
            return new Promise<never>(() => {});
          },
          { client: sqs.newClient(), logger: { info() {}, warn() {}, error: console.error } },
        ),
      ],
      functionTimeoutMs: 2_000,
    });
    sources.push(source);

    // Act
    const { body } = await call('POST', '/api/workflow/too-slow-for-lambda', { body: {} });
    const job = await finished(body.id as string, 30_000);
    await source.stop();

    // Assess: answered with an error reply before the timeout, not redelivered.
    expect(job.status).toBe('failed');
    expect(job.error?.message).toMatch(/did not finish before the Lambda function's timeout/);
    expect(calls).toBe(1);
    expect(source.stats).toMatchObject({ invocations: 1, failed: 0, errors: 0 });
  }, 60_000);

  it('times an attempt out with a delayed timer message and retries it', async () => {
    // Prepare: a worker that loses the first request (no reply) and answers the second.
    const client = sqs.newClient();
    const queueUrl = `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${prefix}patient-step`;
    const stop = new AbortController();
    const attempts: number[] = [];
    const worker = (async () => {
      while (!stop.signal.aborted) {
        const { Messages = [] } = await client
          .send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              WaitTimeSeconds: 1,
              MessageAttributeNames: ['All'],
            }),
            { abortSignal: stop.signal },
          )
          .catch(() => ({ Messages: [] }));
        for (const message of Messages) {
          const attempt = Number(message.MessageAttributes?.attempt?.StringValue);
          attempts.push(attempt);
          if (attempt >= 2) {
            await client.send(
              new SendMessageCommand({
                QueueUrl: message.MessageAttributes?.reply_to?.StringValue,
                MessageBody: JSON.stringify({ patience: 'rewarded' }),
                MessageAttributes: {
                  correlation_id: message.MessageAttributes?.correlation_id ?? { DataType: 'String' },
                  attempt: { DataType: 'Number', StringValue: String(attempt) },
                },
              }),
            );
          }
          await client.send(
            new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
          );
        }
      }
    })();

    // Act
    const started = Date.now();
    const { body } = await call('POST', '/api/workflow/patience', { body: {} });
    const job = await finished(body.id as string, 30_000);
    const elapsed = Date.now() - started;
    stop.abort();
    await worker;

    // Assess
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ patience: 'rewarded' });
    expect(attempts).toEqual([1, 2]);
    expect(elapsed).toBeGreaterThanOrEqual(5_000);
    // The sweep finds nothing left to do.
    await createTimersHandler(timersContainer)(aScheduledEvent(), aLambdaContext());
  }, 60_000);

  it('sleeps a sleep: step on a delayed timer message, shown as sleeping until its wake time, then completes', async () => {
    const { body } = await call('POST', '/api/workflow/nap', { body: { who: 'ann' } });
    const id = body.id as string;
    const asleep = (await call('GET', `/api/job/${id}`)).body as unknown as JobDocument;
    expect(asleep.steps.doze?.status).toBe('running');
    const wakes = Date.parse(asleep.steps.doze?.sleepingUntil as string);
    expect(wakes).toBeGreaterThan(Date.parse(asleep.createdAt));

    const job = await finished(id, 30_000);

    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ napper: 'ann' });
    expect(Date.parse(job.steps.doze?.endedAt as string)).toBeGreaterThanOrEqual(wakes);
  }, 60_000);

  it('sends a params secret read from Secrets Manager under the prefix, and no item of the table or log holds it', async () => {
    // Prepare: a manager deployed with -c secretsPrefix=switchyard/ (SECRETSMANAGER_PREFIX); Secrets Manager
    // answers GetSecretValue for switchyard/<name> (aws-sdk-client-mock).
    const secret = `sk-sim-${randomUUID()}`;
    const secretsManager = new SecretsManagerClient({ region: 'us-east-1' });
    mockClient(secretsManager)
      .on(GetSecretValueCommand, { SecretId: 'switchyard/payments/api-key' })
      .resolves({ SecretString: secret });
    const telemetry = recordingTelemetry();
    const container = await createContainer(
      { ...environment, secretsPrefix: 'switchyard/' },
      {
        buses: { sqs: sqsBusFactory },
        clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient(), secretsManager },
        telemetry,
      },
    );
    containers.push({ container, telemetry });
    const secretsApi = createApiHandler({ ...container, maxBodyBytes: environment.maxBodyBytes });
    const registered = await callOn(secretsApi, 'PUT', '/api/workflow/pay-with-secret', {
      body: 'name: pay-with-secret\nsteps:\n  - name: charge\n    queue: secret-charge\n    params:\n      apiKey: { secret: payments/api-key }\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(registered.status).toBe(201);
    const queueUrl = `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${prefix}secret-charge`;

    // Act
    const started = await callOn(secretsApi, 'POST', '/api/workflow/pay-with-secret', {
      body: { order: 'o-7' },
    });
    const request = await eventually(
      'the charge request on its queue',
      async () => {
        const { Messages } = await sqs.client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ['All'],
          }),
        );
        return Messages?.[0];
      },
      30_000,
    );

    // Assess: the worker got the value; the table (every item, every attribute) and the logs did not.
    expect(started.status).toBe(201);
    expect(JSON.parse(request.Body ?? '{}')).toEqual({ order: 'o-7', apiKey: secret });
    const { Items = [] } = await dynamo.client.send(new ScanCommand({ TableName: environment.tableName }));
    const stored = JSON.stringify(Items, (_key, value) =>
      value instanceof Uint8Array ? gunzipIfZipped(value) : value,
    );
    expect(stored).toContain('payments/api-key');
    expect(stored).not.toContain(secret);
    expect(JSON.stringify(telemetry.logs)).not.toContain(secret);
    const job = await callOn(secretsApi, 'GET', `/api/job/${started.body.id}`);
    expect(JSON.stringify(job.body)).not.toContain(secret);
  }, 60_000);

  it('fails the attempt of a request that ends in the step dead-letter queue', async () => {
    // Prepare: a worker that rejects every delivery (makes it visible again) until SQS gives up on it.
    const client = sqs.newClient();
    const queueUrl = `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${prefix}dead-end-step`;
    const stop = new AbortController();
    let receives = 0;
    const worker = (async () => {
      while (!stop.signal.aborted) {
        const { Messages = [] } = await client
          .send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }), {
            abortSignal: stop.signal,
          })
          .catch(() => ({ Messages: [] }));
        for (const message of Messages) {
          receives++;
          await client.send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: queueUrl,
              ReceiptHandle: message.ReceiptHandle,
              VisibilityTimeout: 0,
            }),
          );
        }
      }
    })();

    // Act
    const { body } = await call('POST', '/api/workflow/dead-end', { body: {} });
    const job = await finished(body.id as string, 30_000);
    stop.abort();
    await worker;

    // Assess
    expect(job.status).toBe('failed');
    expect(receives).toBe(5);
    expect(job.error?.message).toMatch(
      new RegExp(`no worker answered the request: .* dead-letter queue ${prefix}switchyard-steps-dlq`),
    );
  }, 60_000);

  it('pauses a limited fan-out (nothing handled while paused), resumes it, and runs each child once', async () => {
    // Prepare
    const client = sqs.newClient();
    const handled = new Map<number, number>();
    const total = () => [...handled.values()].reduce((sum, n) => sum + n, 0);
    const worker = createWorker({
      queue: 'pause-work',
      transport: new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 }),
      logger: { info() {}, warn: console.warn, error: console.error },
      concurrency: 3,
      handler: async (input) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const item = Number(input.item);
        handled.set(item, (handled.get(item) ?? 0) + 1);
        return { item: item * 10 };
      },
    });
    await worker.start();
    workers.push(worker);
    const items = Array.from({ length: 24 }, (_, n) => n);
    const { body } = await call('POST', '/api/workflow/pausable', { body: { items } });
    const id = body.id as string;
    await eventually('some children to finish', async () => (total() >= 3 ? true : undefined), 30_000);

    // Act: pause, let what is in flight land, hold.
    const paused = await call('POST', `/api/job/${id}/pause`);
    const again = await call('POST', `/api/job/${id}/pause`);
    // Landed: no child runs any more (a state, not a quiet second a busy machine can fake), and
    // the worker handled nothing new over the last look.
    const noChildRuns = async () => {
      const { body: page } = await call('GET', `/api/job/${id}/children`, {
        query: { step: 'pause-each', limit: '1000' },
      });
      return (page.children as { status: string }[]).every((child) => child.status !== 'running');
    };
    let last = -1;
    await eventually(
      'the in-flight children to land',
      async () => {
        const now = total();
        const settled = now === last && (await noChildRuns());
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return settled ? true : undefined;
      },
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const heldAt = total();
    const whilePaused = (await call('GET', `/api/job/${id}`)).body as unknown as JobDocument;
    const listed = await eventually(
      'the paused listing',
      async () => {
        const { body: page } = await call('GET', '/api/jobs', { query: { status: 'paused' } });
        return (page.jobs as string[]).includes(id) ? page : undefined;
      },
      10_000,
    );
    const resumed = await call('POST', `/api/job/${id}/resume`);
    const job = await finished(id, 60_000);

    // Assess
    expect([paused.status, again.status, resumed.status]).toEqual([200, 200, 200]);
    expect(paused.body.status).toBe('paused');
    expect(heldAt).toBe(last);
    expect(heldAt).toBeLessThan(items.length);
    expect(whilePaused.status).toBe('paused');
    expect(listed.jobs).toContain(id);
    expect(resumed.body.status).toBe('running');
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ items: items.map((n) => n * 10) });
    expect(items.map((n) => handled.get(n))).toEqual(items.map(() => 1));
    expect((await call('POST', `/api/job/${id}/pause`)).status).toBe(409);
  }, 120_000);
  it('runs at most 2 jobs of a maxRunning: 2 workflow while starts and ends race across Lambda instances', async () => {
    // Prepare: a worker that could run 6 at once; each job's request is counted while in hand.
    const client = sqs.newClient();
    const inHand = new Map<string, number>();
    let peak = 0;
    const worker = createWorker({
      queue: 'limited-work',
      transport: new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 }),
      logger: { info() {}, warn: console.warn, error: console.error },
      concurrency: 6,
      handler: async (_input, context) => {
        inHand.set(context.jobId, (inHand.get(context.jobId) ?? 0) + 1);
        peak = Math.max(peak, inHand.size);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const left = (inHand.get(context.jobId) ?? 1) - 1;
        if (left) inHand.set(context.jobId, left);
        else inHand.delete(context.jobId);
        return {};
      },
    });
    await worker.start();
    workers.push(worker);
    const apis = [api];
    for (let n = 0; n < 2; n++)
      apis.push(createApiHandler({ ...(await newContainer()), maxBodyBytes: environment.maxBodyBytes }));

    // Act: 8 starts at once, through three API instances.
    const starts = await Promise.all(
      Array.from({ length: 8 }, (_, n) =>
        callOn(apis[n % apis.length] as (typeof apis)[number], 'POST', '/api/workflow/limited-pair', {
          body: { n },
        }),
      ),
    );
    const ids = starts.map((start) => start.body.id as string);
    const jobs = await Promise.all(ids.map((id) => finished(id, 60_000)));

    // Assess
    expect(starts.map((start) => start.status)).toEqual(ids.map(() => 201));
    expect(jobs.map((job) => job.status)).toEqual(ids.map(() => 'completed'));
    expect(peak).toBeLessThanOrEqual(2);
    const listing = (await call('GET', '/api/workflows')).body as unknown as {
      name: string;
      jobs: Record<string, number>;
    }[];
    expect(listing.find((entry) => entry.name === 'limited-pair')?.jobs).toMatchObject({
      completed: 8,
      queued: 0,
      running: 0,
    });
  }, 120_000);

  it('completes 100 of 100 webhook-then-wait jobs and 100 of 100 suspend-after-answer jobs whose answer comes 1 ms after the request', async () => {
    // Prepare: the partner answers through the API (another API instance) 1 ms after it is called.
    const JOBS = 100;
    const client = sqs.newClient();
    const partnerApi = createApiHandler({
      ...(await newContainer()),
      maxBodyBytes: environment.maxBodyBytes,
    });
    const answers: number[] = [];
    const answerSoon = async (jobId: string, step: string, body: Record<string, unknown>) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const answer = await callOn(partnerApi, 'POST', `/api/job/${jobId}/signal/${step}`, { body });
      answers.push(answer.status);
    };
    // Quiet about each suspend (a warning in the SDK's log); errors still show.
    const logger = { info() {}, warn() {}, error: console.error };
    for (const worker of [
      createWorker({
        queue: 'send-webhook',
        transport: new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 }),
        logger,
        concurrency: 20,
        handler: (input, context) => {
          void answerSoon(context.jobId, 'webhook-answer', { decision: `yes-${input.n}` });
          return { sent: true };
        },
      }),
      createWorker({
        queue: 'call-partner',
        transport: new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 }),
        logger,
        concurrency: 20,
        handler: async (input, context) => {
          if (input.signal !== undefined) return { done: input.signal };
          await answerSoon(context.jobId, 'call-partner', { decision: `ok-${input.n}` });
          return suspend('waiting for the partner');
        },
      }),
    ]) {
      await worker.start();
      workers.push(worker);
    }

    // Act
    const run = async (workflow: string) => {
      const ids: string[] = [];
      for (let n = 0; n < JOBS; n++) {
        const started = await call('POST', `/api/workflow/${workflow}`, { body: { n } });
        expect(started.status).toBe(201);
        ids.push(started.body.id as string);
      }
      return Promise.all(ids.map((id) => finished(id, 120_000)));
    };
    const webhookJobs = await run('webhook-then-wait');
    const webhookAnswers = [...answers];
    answers.length = 0;
    const suspendJobs = await run('suspend-then-wait');

    // Assess: every job completed with its own answer; every answer was taken (200) or kept (202).
    expect(webhookJobs.filter((job) => job.status === 'completed').length).toBe(JOBS);
    for (const job of webhookJobs) expect(job.result).toEqual({ sent: true, decision: `yes-${job.input.n}` });
    expect(webhookAnswers.filter((status) => status !== 200 && status !== 202)).toEqual([]);
    expect(suspendJobs.filter((job) => job.status === 'completed').length).toBe(JOBS);
    for (const job of suspendJobs) expect(job.result).toEqual({ done: { decision: `ok-${job.input.n}` } });
    expect(answers).toEqual(Array.from({ length: JOBS }, () => 202));
  }, 300_000);

  it("stops a tree of fan-outs that call each other at the tree's quota (MAX_TREE_JOBS), the creating step failed", async () => {
    // Prepare: an API function instance of a stack deployed with -c maxTreeJobs=40.
    const quota = 40;
    const workflows = ['runaway-ping', 'runaway-pong'] as const;
    await registerRunaway(...workflows);
    const limitedApi = createApiHandler({
      ...(await newContainer({ ...environment, maxTreeJobs: quota })),
      maxBodyBytes: environment.maxBodyBytes,
    });

    // Act: the start's invocation carries the follow-ups out before it answers, the tree's growth with them.
    const started = await callOn(limitedApi, 'POST', `/api/workflow/${workflows[0]}`, { body: {} });
    const root = await finished(started.body.id as string, 60_000);
    await eventually('every job of the tree to end', () => allEnded(workflows), 60_000);

    // Assess
    expect(started.status).toBe(201);
    expect(root.status).toBe('failed');
    expect(root.error?.message).toContain(`the tree of job ${root.uuid} would hold`);
    expect(root.error?.message).toContain(`over its quota of ${quota}`);
    const jobs = await countJobs(workflows);
    expect(jobs).toBeGreaterThan(quota / 2);
    expect(jobs).toBeLessThanOrEqual(quota + 1);
  }, 120_000);

  it('stops a growing tree when its root is cancelled through another Lambda instance: no job appears after the cancel', async () => {
    // Prepare: a quota far from reached (the growth must stop by the cancel, not by it).
    const quota = 10_000;
    const workflows = ['growing-zig', 'growing-zag'] as const;
    await registerRunaway(...workflows);
    const growingApi = createApiHandler({
      ...(await newContainer({ ...environment, maxTreeJobs: quota })),
      maxBodyBytes: environment.maxBodyBytes,
    });
    const cancellingApi = createApiHandler({
      ...(await newContainer()),
      maxBodyBytes: environment.maxBodyBytes,
    });

    // Act: the start's invocation grows the tree as it drains its outbox; another instance cancels.
    const starting = callOn(growingApi, 'POST', `/api/workflow/${workflows[0]}`, { body: {} });
    const root = await eventually(
      'the root job to exist',
      async () =>
        ((await call('GET', '/api/jobs', { query: { workflow: workflows[0] } })).body.jobs as string[])[0],
      30_000,
    );
    await eventually(
      'the tree to grow past 100 jobs',
      async () => (await countJobs(workflows)) > 100,
      60_000,
    );
    const cancelled = await callOn(cancellingApi, 'DELETE', `/api/job/${root}`);
    const atCancel = await countJobs(workflows);
    const started = await starting;
    await eventually('the cascade to end every job of the tree', () => allEnded(workflows), 60_000);

    // Assess
    expect([started.status, cancelled.status]).toEqual([201, 200]);
    expect(atCancel).toBeLessThan(quota);
    expect(await countJobs(workflows)).toBe(atCancel);
  }, 120_000);

  it('runs the order pipeline: a signal, a handled failure, a called workflow, an abort with its onFailure job', async () => {
    // Prepare: the example's workers on the SDK's SQS transport.
    const client = sqs.newClient();
    const alerts: Record<string, unknown>[] = [];
    const orderWorkers = await startOrderWorkers({
      transport: () => new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 }),
      onAlert: (input) => alerts.push(input),
    });
    // Stopped when done (afterAll too, should an assertion fail): ten long polls less beside the big fan-out.
    workers.push(...orderWorkers);
    // The API handler as API Gateway calls it: the query string in its own maps.
    const orderApi: OrderApi = async (method, path, body) => {
      const [route = path, search = ''] = path.split('?');
      const query: Record<string, string[]> = {};
      for (const [name, value] of new URLSearchParams(search)) query[name] = [...(query[name] ?? []), value];
      const answer = await call(method, route, {
        ...(search ? { query } : {}),
        ...(body === undefined ? {} : { body: body as object }),
      });
      return answer as never;
    };

    // Act
    const runs = await runOrders(orderApi, ['o-1001', 'o-1002', 'o-1003', 'o-9999'], { timeoutMs: 90_000 });

    // Assess
    await expectOrderOutcomes(orderApi, runs, { timeoutMs: 90_000 });
    expect((await jobIdsOf(orderApi, 'shipping')).sort()).toEqual(
      [runs.get('o-1001')?.job.steps.ship?.job, runs.get('o-1002')?.job.steps.ship?.job].sort(),
    );
    expect(await jobIdsOf(orderApi, 'order-failed')).toEqual([runs.get('o-9999')?.job.followUp]);
    expect(alerts).toHaveLength(1);
    const aborted = await orderApi<{ jobs: string[] }>(
      'GET',
      '/api/jobs?workflow=order-pipeline&status=aborted',
    );
    expect(aborted.body.jobs).toEqual([runs.get('o-9999')?.id]);
    await Promise.all(orderWorkers.map((worker) => worker.stop()));
  }, 180_000);

  it(`fans out to ${FAN_OUT.toLocaleString('en-US')} children and gathers them`, async () => {
    // Prepare
    const client = sqs.newClient();
    const transport = () => new SqsWorkerTransport({ client, queuePrefix: prefix, waitTimeSeconds: 1 });
    const logger = { info() {}, warn: console.warn, error: console.error };
    const squared: { first?: number; last?: number } = {};
    const fanWorkers = [
      createWorker({
        queue: 'list-numbers',
        transport: transport(),
        logger,
        handler: (input) => ({ numbers: Array.from({ length: Number(input.count) }, (_, n) => n) }),
      }),
      createWorker({
        queue: 'square',
        transport: transport(),
        logger,
        concurrency: 40,
        handler: (input) => {
          squared.first ??= Date.now();
          squared.last = Date.now();
          return { number: Number(input.number) ** 2 };
        },
      }),
      createWorker({
        queue: 'sum-squares',
        transport: transport(),
        logger,
        handler: (input) => {
          const numbers = input.numbers as number[];
          return { count: numbers.length, sum: numbers.reduce((sum, n) => sum + n, 0) };
        },
      }),
    ];
    await Promise.all(fanWorkers.map((worker) => worker.start()));
    workers.push(...fanWorkers);

    // Act
    const started = Date.now();
    const { body } = await call('POST', '/api/workflow/fan-out-squares', { body: { count: FAN_OUT } });
    const job = await finished(body.id as string, 900_000);
    const elapsedMs = Date.now() - started;

    // Assess
    console.info(
      `fan-out of ${FAN_OUT} children completed in ${(elapsedMs / 1000).toFixed(1)} s ` +
        `(${Math.round(FAN_OUT / (elapsedMs / 1000))} children/s): first child handled after ` +
        `${(((squared.first ?? started) - started) / 1000).toFixed(1)} s, last after ` +
        `${(((squared.last ?? started) - started) / 1000).toFixed(1)} s; ${sources[0]?.stats.invocations} reply batches`,
    );
    const [replies] = sources;
    const slices = containers
      .flatMap(({ telemetry }) => telemetry.logged('children created'))
      .map((log) => log.fields as { children: number; commitMs: number })
      .filter((slice) => slice.children > 1);
    const sizes = slices.map((slice) => slice.children).sort((a, b) => a - b);
    const msPerChild = slices.map((slice) => slice.commitMs / slice.children).sort((a, b) => a - b);
    console.info(
      `fan-out slices: ${slices.length} commits creating children, ${sizes[0]}–${sizes.at(-1)} children ` +
        `(median ${sizes[Math.floor(sizes.length / 2)]}), commit ${msPerChild[0]?.toFixed(2)}–` +
        `${msPerChild.at(-1)?.toFixed(2)} ms a child (median ${msPerChild[Math.floor(msPerChild.length / 2)]?.toFixed(2)}); ` +
        `longest reply invocation ${((replies?.stats.longestInvocationMs ?? 0) / 1000).toFixed(1)} s of ` +
        `${FUNCTION_SIZES.replies.timeoutSeconds} s`,
    );
    // No invocation ran over the function's timeout: the slices fitted the time each had left.
    expect(replies?.stats.timeouts).toBe(0);
    expect(replies?.stats.longestInvocationMs).toBeLessThan(FUNCTION_SIZES.replies.timeoutSeconds * 1000);
    expect(job.status).toBe('completed');
    const n = FAN_OUT;
    expect(job.result).toEqual({ count: n, sum: ((n - 1) * n * (2 * n - 1)) / 6 });
    expect(job.steps['square-all']).toMatchObject({ children: n, childrenDone: n });
  }, 900_000);

  it('logged no errors in any container', () => {
    const errors = containers.flatMap(({ telemetry }) =>
      telemetry.logs.filter((log) => log.level === 'error'),
    );
    expect(errors).toEqual([]);
    expect(sources.flatMap((source) => source.errors)).toEqual([]);
  });
});

describe('Serverless simulation: a reply whose handling kills every replies function that takes it', () => {
  it('is poisoned after 3 or 4 deaths: its attempt fails naming why, it waits in the reply dead-letter queue, and the reply batched with it is applied', async () => {
    // Prepare: a reply queue of its own, redriven to a dead-letter queue after 10 receives as the
    // stack's is; the replies function runs out of time on one reply (the simulation's stand-in for
    // a function that cannot finish it: out of time or of memory), and Lambda starts a new container.
    const client = sqs.newClient();
    const name = `${prefix}crash-replies`;
    const replyDlq = await createQueue(sqs.client, `${name}-dlq`);
    const replyQueue = await createQueue(sqs.client, name, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: replyDlq.arn, maxReceiveCount: 10 }),
    });
    if (environment.bus.kind !== 'sqs') throw new Error('the simulation runs on the SQS bus');
    const crashEnvironment = {
      ...environment,
      bus: { ...environment.bus, replyQueueUrl: replyQueue.url, replyDeadLetterQueueUrl: replyDlq.url },
    };
    const telemetry = recordingTelemetry();
    const aContainer = () =>
      createContainer(crashEnvironment, {
        buses: { sqs: sqsBusFactory },
        clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient() },
        telemetry,
      });
    const dyingContainers: Container[] = [];
    const repliesFunction = async () => {
      const container = await aContainer();
      dyingContainers.push(container);
      const manager = managerDyingOn(container.manager, (reply) => reply.body.includes('"unfinishable"'));
      return createRepliesSqsHandler({
        ...container,
        manager,
        poisonQueue: new SqsReplyPoisonQueue(container.sqs, replyDlq.url),
      });
    };
    const starter = await aContainer();
    const workflow = `crash-reply-${randomUUID().slice(0, 8)}`;
    await starter.manager.registerWorkflow({
      name: workflow,
      steps: [
        { name: `${workflow}-answer`, retries: 2 },
        { name: `${workflow}-after`, depends: [`${workflow}-answer`] },
      ],
    });
    const victim = (await starter.manager.startJob({ workflow })).job.id;
    const bystander = (await starter.manager.startJob({ workflow })).job.id;
    await starter.manager.drain();
    const stepQueue = `${queues.reply.slice(0, queues.reply.lastIndexOf('/') + 1)}${prefix}${workflow}-answer`;
    const requests = await eventually('both requests', async () => {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: stepQueue,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ['All'],
        }),
      );
      return Messages.length === 2 ? Messages : undefined;
    });
    const source = startSqsEventSource({
      client: sqs.newClient(),
      queueUrl: replyQueue.url,
      queueArn: replyQueue.arn,
      handlers: [await repliesFunction()],
      newHandler: repliesFunction,
      functionTimeoutMs: 5_000,
      maxBatchingWindowMs: 500,
    });

    // Act: the worker answers both in one go; one answer is the reply no invocation can finish.
    for (const request of requests) {
      const correlationId = request.MessageAttributes?.correlation_id?.StringValue as string;
      await client.send(
        new SendMessageCommand({
          QueueUrl: replyQueue.url,
          MessageBody: correlationId.startsWith(victim) ? '{"unfinishable": true}' : '{"fine": true}',
          MessageAttributes: {
            correlation_id: { DataType: 'String', StringValue: correlationId },
            attempt: { DataType: 'Number', StringValue: '1' },
          },
        }),
      );
    }
    const failed = await finished(victim, 120_000);
    const kept = await eventually('the poisoned reply in the dead-letter queue', async () => {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: replyDlq.url,
          MessageAttributeNames: ['All'],
          WaitTimeSeconds: 1,
        }),
      );
      return Messages[0];
    });
    await source.stop();
    for (const container of dyingContainers) container.manager.stop();

    // Assess
    // The batch it came in, perhaps the batch it came back in, then twice alone.
    expect(source.stats.timeouts).toBeGreaterThanOrEqual(MAX_CRASHES_IN_HAND + 1);
    expect(source.stats.timeouts).toBeLessThanOrEqual(MAX_CRASHES_IN_HAND + 2);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { attempt: 1, message: poisonedReason(MAX_CRASHES_IN_HAND) },
    });
    expect(failed.steps[`${workflow}-answer`]).toMatchObject({ status: 'failed', attempt: 1 });
    expect(kept.Body).toBe('{"unfinishable": true}');
    expect(kept.MessageAttributes?.correlation_id?.StringValue).toBe(`${victim}:${workflow}-answer`);
    expect(kept.MessageAttributes?.[POISONED_REASON_ATTRIBUTE]?.StringValue).toBe(
      poisonedReason(MAX_CRASHES_IN_HAND),
    );
    const other = (await call('GET', `/api/job/${bystander}`)).body as unknown as JobDocument;
    expect(other.steps[`${workflow}-answer`]?.status).toBe('completed');
    expect(other.steps[`${workflow}-after`]?.status).toBe('running');
    expect(telemetry.counted('replies_poisoned_total')).toBe(1);
  }, 180_000);
});

/** A binary attribute as text: gzip (the store's compressed JSON) unzipped, other bytes as they are. */
function gunzipIfZipped(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes);
  return buffer[0] === 0x1f && buffer[1] === 0x8b
    ? gunzipSync(buffer).toString('utf8')
    : buffer.toString('latin1');
}
