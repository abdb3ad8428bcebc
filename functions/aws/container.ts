import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  type Bus,
  type NotifyTarget,
  readNotify,
  type SecretResolver,
  type Store,
} from '../../engine/index.js';
import { DynamoDbStore } from '../adapters/dynamodb/store.js';
import { SqsTimers } from '../adapters/sqs/timers.js';
import { DeliveryPump } from '../manager/delivery-pump.js';
import type { DeliveryRules } from '../manager/delivery-rules.js';
import { Manager } from '../manager/manager.js';
import { secretResolvingBus } from '../manager/secret-bus.js';
import type { BusKind, HandlerEnvironment } from './environment.js';
import type { EventBridgeSchedules, EventBridgeSchedulesOptions } from './eventbridge-schedules.js';
import { createLambdaTelemetry, type LambdaTelemetry } from './lambda-telemetry.js';
import { lazy } from './lazy.js';
import { queueRulesOf } from './queue-rules.js';
import { syncWorkflowSchedules } from './schedule-registration.js';
import { sdkClientConfig } from './sdk-clients.js';

/** Everything a handler uses, built once per Lambda container. */
export interface Container {
  env: HandlerEnvironment;
  manager: Manager;
  store: Store;
  bus: Bus;
  timers: SqsTimers;
  telemetry: LambdaTelemetry;
  /** The container's SQS client (timers; on the SQS bus, its queues). */
  sqs: SQSClient;
  /** Workflow schedules on EventBridge Scheduler, when the stack has them (SCHEDULE_GROUP). */
  schedules?: WorkflowSchedules;
  /** Posts the delivery log's due webhooks (the timers function runs it each minute). */
  deliveries: DeliveryPump;
}

/**
 * What the handlers do with the schedules: sync them at registration, re-arm one at its tick, repair
 * the missing and late ones (the timers function's sweep).
 */
export type WorkflowSchedules = Pick<EventBridgeSchedules, 'sync' | 'rearm' | 'repair'>;

/** SDK clients to use instead of the default ones (tests point them at the emulators). */
export interface ContainerClients {
  dynamodb?: DynamoDBClient;
  sqs?: SQSClient;
  secretsManager?: SecretsManagerClient;
  scheduler?: SchedulerClient;
}

/** Wraps an AWS SDK client the container or a bus creates (X-Ray tracing, functions/aws/tracing.ts). */
export type CaptureClient = <C extends object>(client: C) => C;

/** Builds the bus of one kind. One file each, so a handler bundles only the bus it runs with. */
export type BusFactory = (input: {
  env: HandlerEnvironment;
  sqs: SQSClient;
  secretsManager?: SecretsManagerClient;
  telemetry: LambdaTelemetry;
  captureClient?: CaptureClient;
}) => Promise<Bus>;

export interface ContainerOptions {
  /** The buses this function can run with (`sqs-bus-factory.ts`, `rabbitmq-bus-factory.ts`). */
  buses: Partial<Record<BusKind, BusFactory>>;
  clients?: ContainerClients;
  telemetry?: LambdaTelemetry;
  /** Applied to every SDK client, given or created. */
  captureClient?: CaptureClient;
  /** @default Date.now */
  clock?: () => number;
  /**
   * Where `params` secrets and webhook signing secrets are read, instead of Secrets Manager under
   * `-c secretsPrefix` (SECRETSMANAGER_PREFIX). With neither, a request naming a secret fails its
   * attempt, and `notify:` is refused at registration, saying so.
   */
  secrets?: SecretResolver;
}

/**
 * Wires the deployed runtime as `switchyard serve` wires the local one (functions/local/serve.ts):
 * the manager on DynamoDB, SQS or Amazon MQ for RabbitMQ, delayed SQS messages for timers, and
 * Powertools for logs and metrics.
 */
export async function createContainer(
  env: HandlerEnvironment,
  options: ContainerOptions,
): Promise<Container> {
  const busFactory = options.buses[env.bus.kind];
  if (!busFactory) {
    throw new Error(
      `this function does not run with BUS=${env.bus.kind} (it runs with ${Object.keys(options.buses).join(', ')})`,
    );
  }
  const telemetry = options.telemetry ?? createLambdaTelemetry({ logLevel: env.logLevel });
  const clock = options.clock ?? Date.now;
  const capture: CaptureClient = options.captureClient ?? ((client) => client);
  const dynamodb = capture(options.clients?.dynamodb ?? new DynamoDBClient(sdkClientConfig()));
  const sqs = capture(options.clients?.sqs ?? new SQSClient(sdkClientConfig()));
  // Finished jobs' trees expire by the table's TTL `retentionDays` after they ended; the timer sweep
  // stamps the trees of jobs with children and deletes what older code finished (ttl-stamps.ts).
  const store = new DynamoDbStore({
    client: dynamodb,
    tableName: env.tableName,
    retentionSeconds: env.retentionDays > 0 ? env.retentionDays * 86_400 : undefined,
  });
  const bus = await busFactory({
    env,
    sqs,
    secretsManager: options.clients?.secretsManager,
    telemetry,
    captureClient: options.captureClient,
  });
  const timers = new SqsTimers({
    client: sqs,
    queueUrl: env.timerQueueUrl,
    clock,
    onError: (error, lost) =>
      telemetry.logger.warn('timers not armed; the sweep fires them when due', {
        error,
        timers: lost.length,
      }),
  });
  const schedules = env.schedules
    ? lazySchedules({ ...env.schedules, clock }, options.clients?.scheduler, capture)
    : undefined;
  // Secrets given (tests), or Secrets Manager's under -c secretsPrefix; none: a request naming a
  // secret fails its attempt, and `notify:` is refused at registration, saying so.
  const secrets =
    options.secrets ??
    (env.secretsPrefix
      ? lazySecrets?.(env.secretsPrefix, options.clients?.secretsManager, capture)
      : undefined);
  const deliveryRules: DeliveryRules = {
    httpsOnly: env.notify.httpsOnly,
    ...(env.notify.allowHosts ? { allowHosts: env.notify.allowHosts } : {}),
  };
  const manager = new Manager({
    store,
    bus: secretResolvingBus(bus, secrets),
    defaultNotify: defaultNotifyOf(env),
    notifyChecks: { rules: deliveryRules, secrets },
    timers,
    telemetry,
    clock,
    // The functions that register workflows (API, deploy) keep their EventBridge schedules in step.
    onRegistered:
      schedules && env.schedules?.targetArn
        ? (definition) => syncWorkflowSchedules(store, schedules, definition, telemetry.logger)
        : undefined,
    maxFanOut: env.maxFanOut,
    fanOutSlice: env.fanOutSlice,
    maxReplyBytes: env.maxMessageBytes,
    maxFanOutBytes: env.maxFanOutBytes,
    queueRules: queueRulesOf(env),
    replyAuth: env.replyAuth,
    maxTreeJobs: env.maxTreeJobs,
  });
  const deliveries = new DeliveryPump({
    log: store,
    secrets,
    rules: deliveryRules,
    logger: telemetry.logger,
    metrics: telemetry.metrics,
    clock,
  });
  return { env, manager, store, bus, timers, telemetry, sqs, schedules, deliveries };
}

/** NOTIFY_URL, NOTIFY_EVENTS, NOTIFY_SECRET as the default target; an invalid one stops the container. */
function defaultNotifyOf(env: HandlerEnvironment): NotifyTarget[] | undefined {
  if (!env.notify.default) return undefined;
  const read = readNotify({ ...env.notify.default });
  if (read.ok) return read.targets;
  throw new Error(
    `NOTIFY_URL, NOTIFY_EVENTS, NOTIFY_SECRET: ${read.problems.map((p) => p.message).join('; ')}`,
  );
}

/**
 * Secrets Manager's secrets under a prefix (functions/aws/secrets-manager-secrets.ts), the client and
 * the resolver imported when a request first names a secret. A stack without `-c secretsPrefix`
 * bundles its functions with `SWITCHYARD_BUNDLED_SECRETS` false (infra/bundling.ts): this is then
 * `undefined` as esbuild reads it, and neither module nor any of this code is in the bundle.
 */
const lazySecrets =
  process.env.SWITCHYARD_BUNDLED_SECRETS === 'false'
    ? undefined
    : (prefix: string, client: SecretsManagerClient | undefined, capture: CaptureClient): SecretResolver => {
        const resolver = lazy(async () => {
          const [sdk, { secretsManagerSecrets }] = await Promise.all([
            import('@aws-sdk/client-secrets-manager'),
            import('./secrets-manager-secrets.js'),
          ]);
          return secretsManagerSecrets({
            client: capture(client ?? new sdk.SecretsManagerClient(sdkClientConfig())),
            prefix,
          });
        });
        return { resolve: async (names) => (await resolver()).resolve(names) };
      };

/**
 * Workflow schedules whose Scheduler client loads on first use: every function of a stack with a
 * schedule group has SCHEDULE_GROUP, but only a registration or a tick writes a schedule, so the others
 * never import the client. Bundled whatever the bus: schedules run on SQS and RabbitMQ stacks alike.
 */
function lazySchedules(
  options: Omit<EventBridgeSchedulesOptions, 'client'>,
  client: SchedulerClient | undefined,
  capture: CaptureClient,
): WorkflowSchedules {
  const load = lazy(async () => {
    const [{ SchedulerClient }, { EventBridgeSchedules }] = await Promise.all([
      import('@aws-sdk/client-scheduler'),
      import('./eventbridge-schedules.js'),
    ]);
    return new EventBridgeSchedules({
      ...options,
      client: capture(client ?? new SchedulerClient(sdkClientConfig())),
    });
  });
  return {
    sync: async (definition, formerKeys) => (await load()).sync(definition, formerKeys),
    rearm: async (workflow, key, next) => (await load()).rearm(workflow, key, next),
    repair: async (definition, targetArn) => (await load()).repair(definition, targetArn),
  };
}
