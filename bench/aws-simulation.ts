import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { loadWorkflows } from '../engine/index.js';
import { DynamoDbStore } from '../functions/adapters/dynamodb/store.js';
import { type Container, createContainer } from '../functions/aws/container.js';
import { readHandlerEnvironment } from '../functions/aws/environment.js';
import { createLambdaTelemetry } from '../functions/aws/lambda-telemetry.js';
import { sqsBusFactory } from '../functions/aws/sqs-bus-factory.js';
import { createApiHandler } from '../functions/handlers/api.js';
import { createRegisterWorkflowsHandler } from '../functions/handlers/register-workflows.js';
import { createRepliesSqsHandler } from '../functions/handlers/replies-sqs.js';
import { createWorker, type Worker } from '../functions/worker/index.js';
import { SqsWorkerTransport } from '../functions/worker/transports/sqs.js';
import { FUNCTION_SIZES } from '../infra/function-sizes.js';
import { aCustomResourceEvent, aLambdaContext, anApiEvent } from '../test/support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../test/support/dynamodb-local.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../test/support/fauxqs.js';
import { recordingTelemetry } from '../test/support/recording-telemetry.js';
import { type SqsEventSource, startSqsEventSource } from '../test/support/sqs-event-source.js';
import { AWS_CALL_MS, AwsWaitClock, addCallLatency } from './aws-call-latency.js';
import { type Counts, emptyCounts, meterDynamoDb, meterSqs } from './aws-meter.js';
import { InvocationRunner, type Invocations, noInvocations } from './lambda-invocations.js';
import { benchQueues, benchWorkflowsYaml, listItems, noOpQueues } from './workloads.js';

/*
 * The deployed path, simulated as test/e2e/serverless.test.ts does it: the Lambda handlers on
 * DynamoDB Local and fauxqs, the SQS event source played by pollers with the stack's batch size
 * (10), several reply lanes (concurrent Lambda instances, each a container of its own), the API
 * function in as many containers as starts run at once, and the SDK's workers on SQS. Every client
 * is metered (aws-meter.ts) under the role that would pay for it: `api` and `replies` (the
 * manager's functions), `eventSource` (Lambda's SQS pollers), `workers`; `setup` and `observer`
 * (registration, and the benchmark watching jobs) are not part of any step's cost.
 */

export type Role = 'api' | 'replies' | 'eventSource' | 'workers' | 'retention' | 'setup' | 'observer';

export interface Simulation {
  counts: Record<Role, Counts>;
  /** Lambda invocations by function. */
  invocations: { api: Invocations; replies: Invocations };
  observer: Container;
  /** Whether DynamoDB writes are priced (probing item sizes); off to measure durations. */
  setProbing(on: boolean): void;
  /**
   * The timing pass: while on, invocations run one at a time, each timed alone (InvocationRunner),
   * and the manager's calls take AWS's time (aws-call-latency.ts).
   */
  setTiming(on: boolean): void;
  /** Bytes the manager's functions wrote to their logs (application lines and EMF metrics) so far. */
  logBytes(): number;
  /**
   * The timers function's hourly retention run (its DynamoDB calls under `retention`), as if ten
   * minutes had passed: it stamps the trees of every job ended so far with their expiry.
   */
  retentionRun(): Promise<void>;
  /** The API function's execution environments so far: as many as starts ever ran at once. */
  apiEnvironments(): number;
  /** Starts a job through the API function, as API Gateway would, in an idle environment or a new one. */
  startJob(workflow: string, input: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

const REPLY_LANES = 4;

export async function startSimulation(): Promise<Simulation> {
  const [dynamo, sqs]: [DynamoDbLocal, Fauxqs] = await Promise.all([
    startDynamoDbLocal(),
    startSqsEmulator(),
  ]);
  const probe = dynamo.newClient();
  let probing = true;
  const counts: Record<Role, Counts> = {
    api: emptyCounts(),
    replies: emptyCounts(),
    eventSource: emptyCounts(),
    workers: emptyCounts(),
    retention: emptyCounts(),
    setup: emptyCounts(),
    observer: emptyCounts(),
  };
  const sqsClient = (role: Role) => {
    const client = sqs.newClient();
    meterSqs(client, counts[role]);
    return client;
  };
  const tableName = uniqueTableName('switchyard-bench');
  await createSwitchyardTable(dynamo.client, tableName);
  const prefix = uniqueQueuePrefix('bench');
  const setupSqs = sqsClient('setup');
  const replyDlq = await createQueue(setupSqs, `${prefix}workflow-manager-dlq`);
  const reply = await createQueue(setupSqs, `${prefix}workflow-manager`, {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: replyDlq.arn, maxReceiveCount: 10 }),
  });
  const stepDlq = await createQueue(setupSqs, `${prefix}switchyard-steps-dlq`);
  const timers = await createQueue(setupSqs, `${prefix}switchyard-timers`);
  const environment = readHandlerEnvironment({
    TABLE_NAME: tableName,
    BUS: 'sqs',
    QUEUE_PREFIX: prefix,
    REPLY_QUEUE: 'workflow-manager',
    REPLY_QUEUE_URL: reply.url,
    TIMER_QUEUE_URL: timers.url,
    DEAD_LETTER_QUEUE_URL: stepDlq.url,
    STEP_QUEUE_DLQ_ARN: stepDlq.arn,
    STEP_QUEUE_VISIBILITY_TIMEOUT: '30',
    // As deployed (infra/handler-environment.ts): INFO logs, a 30-day retention (TTL).
    LOG_LEVEL: 'INFO',
    RETENTION_DAYS: '30',
  });
  // Deployed long after the TTL retention came: no job is older than the legacy sweep's cutoff.
  await dynamo.client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: { pk: { S: 'RET' }, sk: { S: 'legacy' }, before: { N: '0' } },
    }),
  );
  // What the manager's functions log: Lambda sends their stdout to CloudWatch Logs.
  let loggedBytes = 0;
  const stdoutWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    // The functions' lines (JSON log lines and EMF metrics) are counted, not shown; the rest goes on.
    if (!text.startsWith('{"')) return stdoutWrite(chunk, ...rest);
    loggedBytes += Buffer.byteLength(text);
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  const containers: Container[] = [];
  const awsWaits = new AwsWaitClock();
  const runner = new InvocationRunner(awsWaits);
  const newContainer = async (role: Role): Promise<Container> => {
    const dynamodb = dynamo.newClient();
    meterDynamoDb(dynamodb, probe, counts[role], () => probing);
    const logs = role === 'api' || role === 'replies';
    const sqsForRole = sqsClient(role);
    if (logs) {
      const timing = () => runner.oneAtATime;
      addCallLatency(dynamodb, AWS_CALL_MS, timing, awsWaits);
      addCallLatency(sqsForRole, AWS_CALL_MS, timing, awsWaits);
    }
    const container = await createContainer(environment, {
      buses: { sqs: sqsBusFactory },
      clients: { dynamodb, sqs: sqsForRole },
      telemetry: logs ? createLambdaTelemetry({ logLevel: environment.logLevel }) : recordingTelemetry(),
    });
    containers.push(container);
    return container;
  };

  const queues = benchQueues('bench-');
  const definitions = loadWorkflows(benchWorkflowsYaml(queues)).workflows;
  await createRegisterWorkflowsHandler(await newContainer('setup'))(
    aCustomResourceEvent('Create', definitions),
  );

  const invocations = { api: noInvocations(), replies: noInvocations() };
  // "For each concurrent request, Lambda provisions a separate instance of your execution
  // environment" (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html), and an
  // idle one takes the next request: an API container starts one job at a time. Sharing one between
  // concurrent starts batched their writes and sends across invocations and billed each start for
  // the others' waits.
  type ApiHandler = ReturnType<typeof createApiHandler>;
  const idleApis: ApiHandler[] = [];
  let apiEnvironments = 0;
  const takeApi = async (): Promise<ApiHandler> => {
    const idle = idleApis.pop();
    if (idle) return idle;
    apiEnvironments++;
    return createApiHandler({ ...(await newContainer('api')), maxBodyBytes: environment.maxBodyBytes });
  };
  const replyHandlers = [];
  for (let lane = 0; lane < REPLY_LANES; lane++) {
    const handler = createRepliesSqsHandler(await newContainer('replies'));
    replyHandlers.push((event: SQSEvent) =>
      runner.run(invocations.replies, FUNCTION_SIZES.replies.memorySize, () =>
        handler(event, aLambdaContext()),
      ),
    );
  }
  const sources: SqsEventSource[] = [
    startSqsEventSource({
      client: sqsClient('eventSource'),
      queueUrl: reply.url,
      queueArn: reply.arn,
      handlers: replyHandlers,
    }),
  ];
  const observer = await newContainer('observer');
  const retentionClient = dynamo.newClient();
  meterDynamoDb(retentionClient, probe, counts.retention, () => probing);
  const retentionStore = new DynamoDbStore({
    client: retentionClient,
    tableName,
    retentionSeconds: environment.retentionDays * 86_400,
    clock: () => Date.now() + 10 * 60_000,
  });

  const workerSqs = sqsClient('workers');
  const transport = () =>
    new SqsWorkerTransport({ client: workerSqs, queuePrefix: prefix, waitTimeSeconds: 1 });
  const quiet = { info() {}, warn: console.warn, error: console.error };
  const workers: Worker[] = [
    ...noOpQueues(queues).map((queue) =>
      createWorker({ queue, transport: transport(), logger: quiet, concurrency: 20, handler: () => ({}) }),
    ),
    createWorker({
      queue: queues.list,
      transport: transport(),
      logger: quiet,
      handler: (input) => listItems(input),
    }),
  ];
  await Promise.all(workers.map((worker) => worker.start()));

  return {
    counts,
    invocations,
    observer,
    setProbing(on) {
      probing = on;
    },
    setTiming(on) {
      runner.oneAtATime = on;
    },
    logBytes: () => loggedBytes,
    async retentionRun() {
      await retentionStore.deleteFinishedJobs(Date.now() - environment.retentionDays * 86_400_000);
    },
    apiEnvironments: () => apiEnvironments,
    async startJob(workflow, input) {
      const api = await takeApi();
      const result = await runner
        .run(invocations.api, FUNCTION_SIZES.api.memorySize, () =>
          api(anApiEvent('POST', `/api/workflow/${workflow}`, { body: input }), aLambdaContext(29_000)),
        )
        .finally(() => idleApis.push(api));
      if (result.statusCode !== 201)
        throw new Error(`starting ${workflow} answered ${result.statusCode}: ${result.body}`);
      return (JSON.parse(result.body) as { id: string }).id;
    },
    async stop() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await Promise.all(sources.map((source) => source.stop()));
      for (const container of containers) {
        await container.manager.drain();
        container.manager.stop();
      }
      process.stdout.write = stdoutWrite;
      probe.destroy();
      await sqs.stop();
      await dynamo.stop();
    },
  };
}
