import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_NAMESPACE,
  type DeadLetterHandlers,
  definitionInNamespace,
  formatDefinitionError,
  type Housekeeping,
  type JobQueries,
  type NotifyTarget,
  type ReplyConsumption,
  readNotify,
  type Store,
  type WorkflowDefinition,
} from '../../engine/index.js';
import type { MemoryBroker } from '../adapters/memory/bus.js';
import { SqliteStore } from '../adapters/sqlite/store.js';
import { DEFAULT_MAX_BODY_BYTES } from '../api/api-handler.js';
import { ApiService } from '../api/api-service.js';
import type { ApiDeps } from '../api/router.js';
import { DeliveryPump } from '../manager/delivery-pump.js';
import type { DeliveryRules } from '../manager/delivery-rules.js';
import { JobEventHub } from '../manager/job-event-hub.js';
import { Manager } from '../manager/manager.js';
import { loadForDeployment, type QueueRules } from '../manager/queue-rules.js';
import { ReplyPolicy } from '../manager/reply-policy.js';
import { secretResolvingBus } from '../manager/secret-bus.js';
import { createJsonLogger } from '../telemetry/json-logger.js';
import { PrometheusMetrics, type QueueGaugeEntry } from '../telemetry/prometheus-metrics.js';
import type { Logger } from '../telemetry/telemetry.js';
import { refuseOpenBind } from './bind-guard.js';
import { registerConfigWorkflows } from './config-workflows.js';
import { readDescriptors, reportDescriptors } from './descriptor-budget.js';
import { EventStreams } from './event-streams.js';
import { type HttpBounds, httpBounds } from './http-bounds.js';
import { HEALTH_MAX_CONNECTIONS, listenHttp } from './http-listeners.js';
import { archiveFinishedJobs } from './job-archive.js';
import { LOCAL_BUSES, type LocalBus, type LocalBusKind } from './local-buses.js';
import { LocalSchedules } from './local-schedules.js';
import { localSecrets } from './local-secrets.js';
import { LocalTimers } from './local-timers.js';
import { sourcePolicy } from './request-source.js';

export interface ServeOptions {
  /** Workflow files registered on start, each only when its definition changed since the last start. */
  configFiles?: string[];
  /** The namespace of the `configFiles` workflows whose file names none (`serve --namespace`). @default 'default' */
  namespace?: string;
  /** Put before each step queue of the `configFiles` workflows whose file sets none (`serve --queue-prefix`). */
  queuePrefix?: string;
  /** @default 'switchyard.db' */
  db?: string;
  /** @default $AMQP_URL, then $AMQP_SERVER, then amqp://guest:guest@127.0.0.1:5672 */
  amqpUrl?: string;
  /** The bus serve runs on (local-buses.ts). @default 'rabbitmq' */
  bus?: LocalBusKind;
  /** The queue workers reply to (`reply_to`). @default 'workflow-manager' */
  replyQueue?: string;
  /** Prefix of the RabbitMQ `connection_name` of serve's connections. @default 'switchyard' */
  connectionName?: string;
  /** @default 8080; 0 picks a free port */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** HTTP timeouts and the most connections held (`--headers-timeout`, `--request-timeout`, `--keep-alive-timeout`, `--max-connections`). */
  http?: Partial<HttpBounds>;
  /** A second listener, on this port of `host`, that answers `/healthz` only (`--health-port`; 0 picks a free port). */
  healthPort?: number;
  /** Finished jobs older than this (ms) are deleted (archived first, with `archiveDir`). */
  retainMs?: number;
  /** Where retention archives finished jobs, as JSON Lines, before deleting them (`--archive-dir`). */
  archiveDir?: string;
  /** A JSON file of secret names to values, for `params` that name `{ secret: NAME }` (`--secrets-file`). */
  secretsFile?: string;
  /** Secrets from the environment: this prefix + the name in capitals (`--secrets-env-prefix`; local-secrets.ts). */
  secretsEnvPrefix?: string;
  /**
   * The webhook target of workflows without a `notify:` of their own (`--notify-url`,
   * `--notify-events`, `--notify-secret`; docs/notifications.md).
   */
  notify?: { url: string; events: readonly string[]; secret: string };
  /** Hosts webhook deliveries may go to (`--notify-allow-host`). @default any */
  notifyAllowHosts?: string[];
  token?: string;
  /** Host names answered besides loopback ones and the bound address (`--allow-host`). */
  allowHosts?: string[];
  /** Origins whose pages may call the API besides serve's own (`--allow-origin`). */
  allowOrigins?: string[];
  maxBodyBytes?: number;
  maxFanOut?: number;
  /** The largest reply taken and request sent, in bytes (`--max-reply`). @default 1 MiB */
  maxReplyBytes?: number;
  /** The most bytes of input one fan-out may give its children (`--max-fan-out-bytes`). @default 256 MiB */
  maxFanOutBytes?: number;
  /** Children a fan-out creates per transition. @default 10000 */
  fanOutSlice?: number;
  /** The most jobs one tree may hold under its root (`--max-tree-jobs`). @default 1000000 */
  maxTreeJobs?: number;
  /** Static dashboard files served at `/`. */
  dashboard?: ApiDeps['dashboard'];
  logger?: Logger;
  /** Passed to the SQLite store. @default 'FULL' */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * How long `close` waits for the outbox to drain (a full queue may refuse its requests for much
   * longer); what is left stays in the database and is sent on the next start. @default 5000
   */
  drainTimeoutMs?: number;
  /**
   * How long a request may stay in RabbitMQ (its `expiration`), however often workers hand it back;
   * one still awaited then is sent again (`--request-ttl`). @default 3600000 (1 h)
   */
  requestTtlMs?: number;
  /**
   * Declare new step queues as quorum queues that deliver a request at most `maxDeliveries` times,
   * then dead-letter it: the step records "rejected by the worker N times" (`--quorum-queues`).
   * @default false
   */
  quorumQueues?: boolean;
  /** With `quorumQueues`: deliveries before a request is dead-lettered (`--max-deliveries`). @default 5 */
  maxDeliveries?: number;
  /**
   * Take only replies (and dead letters) that echo their request's token (`--reply-auth`;
   * protocol.md, "Reply authentication"). @default false
   */
  replyAuth?: boolean;
}

export interface ServeHandle {
  url: string;
  /** With `healthPort`: the health listener's URL. */
  healthUrl?: string;
  manager: Manager;
  store: Store;
  /** With `--bus memory`: the in-process broker workers connect to. */
  broker?: MemoryBroker;
  /**
   * Resolves when serve cannot go on (the broker refused the login or the URL's vhost, or another
   * manager consumes the reply queue); the caller closes it and exits non-zero.
   */
  failed: Promise<Error>;
  /** Stops consuming, finishes what is in hand, closes everything. */
  close(): Promise<void>;
}

/** The `--config` files' workflows, and the queue prefix each names for its namespace. */
export interface ConfigWorkflows {
  /** Named in their namespace, their queues under its prefix. */
  definitions: WorkflowDefinition[];
  /** By namespace: the prefix the files (or `serve --queue-prefix`) give it. */
  queuePrefixes: Map<string, string>;
}

/**
 * The workflows of `--config` files, as they are registered: in the namespace the file names
 * (`namespace:`), else `scope.namespace` (`serve --namespace`), else `default`; with the file's
 * `queuePrefix:`, else `scope.queuePrefix`, before each step queue. Serve's files are the operator's:
 * the prefix they give a namespace becomes its setting. Throws one error listing every problem.
 */
export async function readWorkflowFiles(
  files: readonly string[],
  rules: QueueRules = {},
  scope: { namespace?: string; queuePrefix?: string } = {},
): Promise<ConfigWorkflows> {
  const definitions: WorkflowDefinition[] = [];
  const queuePrefixes = new Map<string, string>();
  const problems: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      problems.push(
        `${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
      continue;
    }
    const result = loadForDeployment(text, { file }, rules);
    problems.push(...result.errors.map(formatDefinitionError));
    const namespace = result.namespace ?? scope.namespace ?? DEFAULT_NAMESPACE;
    const prefix = result.queuePrefix ?? scope.queuePrefix;
    if (prefix !== undefined) {
      const earlier = queuePrefixes.get(namespace);
      if (earlier !== undefined && earlier !== prefix) {
        problems.push(
          `${file}: gives namespace "${namespace}" the queue prefix "${prefix}", but another file gives it "${earlier}"`,
        );
      }
      queuePrefixes.set(namespace, prefix);
    }
    definitions.push(
      ...result.workflows.map((workflow) => definitionInNamespace(workflow, namespace, prefix)),
    );
  }
  if (problems.length) throw new Error(`invalid workflow definitions:\n${problems.join('\n')}`);
  return { definitions, queuePrefixes };
}

/** Gives each namespace the queue prefix serve's files give it, saying so when that changes one. */
async function applyConfigPrefixes(
  prefixes: ReadonlyMap<string, string>,
  manager: Manager,
  logger: Logger,
): Promise<void> {
  for (const [namespace, queuePrefix] of prefixes) {
    const current = await manager.namespaces.settings(namespace);
    if (current?.queuePrefix === queuePrefix) continue;
    await manager.namespaces.change({ namespace, queuePrefix });
    if (current?.queuePrefix !== undefined) {
      logger.warn('namespace queue prefix changed by the workflow files', {
        namespace,
        queuePrefix,
        was: current.queuePrefix,
      });
    }
  }
}

/**
 * The local manager in one process: the API on node:http, the reply consumer, the timers, on
 * SQLite and RabbitMQ (or the in-memory bus). On start it recovers: unsent requests are sent and
 * timers re-armed from the database.
 */
export async function startServe(options: ServeOptions = {}): Promise<ServeHandle> {
  const logger = options.logger ?? createJsonLogger({});
  const queueRules: QueueRules = options.replyQueue ? { replyQueue: options.replyQueue } : {};
  const policy = sourcePolicy(options);
  const bounds = httpBounds(options.http);
  await refuseOpenBind(options.host ?? '127.0.0.1', options.token);
  const { definitions, queuePrefixes } = await readWorkflowFiles(options.configFiles ?? [], queueRules, {
    namespace: options.namespace,
    queuePrefix: options.queuePrefix,
  });
  const store = SqliteStore.open(options.db ?? 'switchyard.db', { synchronous: options.synchronous });
  const { bus, broker, description, requestTtlMs }: LocalBus = LOCAL_BUSES[options.bus ?? 'rabbitmq'](
    options,
    logger,
  );
  const metrics = new PrometheusMetrics(store);
  store.timeWrites((seconds) => metrics.observeStoreWrite(seconds));
  const consumers = new Map<string, ReplyConsumption>();
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });

  /** Expired requests are sent again if still awaited; those rejected too often fail their attempt. */
  const deadLetterHandlers: DeadLetterHandlers = {
    expired: (correlationId, attempt, token) => manager.requestExpired(correlationId, attempt, token),
    rejected: (correlationId, attempt, detail, token) =>
      manager.deadLettered(correlationId, attempt, detail, token),
  };
  /**
   * Starts consuming a vhost's reply queue (and its dead-lettered requests, on a bus that has them)
   * without waiting for the broker: while it is unreachable, serve still answers (`/healthz` says
   * 503) and the consumer connects when the broker comes back.
   */
  const consumeVhost = (vhost: string | null): void => {
    const key = vhost ?? '';
    if (consumers.has(key)) return;
    // The URL's own vhost is serve's: a refusal there is fatal rather than retried for ever.
    const consuming = bus.consumeReplies(
      replies.handle,
      vhost === null ? { vhost, stopWhenRefused: true, onFatal: fail } : { vhost },
    );
    const deadLetters = bus.consumeDeadLetters?.(deadLetterHandlers, { vhost });
    deadLetters?.catch((error: unknown) =>
      logger.error('cannot consume dead-lettered requests', { vhost, error }),
    );
    const entry = {
      stop: async () => {
        const consumers = [consuming, deadLetters].map((started) =>
          Promise.race([started, sleep(2000)]).catch(() => undefined),
        );
        await Promise.all(consumers.map(async (consumer) => (await consumer)?.stop()));
      },
    };
    consuming.catch((error) => {
      if (vhost === null) return fail(error as Error);
      logger.error('cannot consume replies', { vhost, error });
      // A vhost the broker refused: registering a workflow on it again tries again.
      if (consumers.get(key) === entry) consumers.delete(key);
    });
    consumers.set(key, entry);
  };

  const timers = new LocalTimers(
    (due) => manager.fireTimers(due),
    Date.now,
    (error) => logger.error('timers failed; retrying', { error }),
  );
  const secrets = localSecrets({ file: options.secretsFile, envPrefix: options.secretsEnvPrefix });
  const deliveryRules: DeliveryRules = options.notifyAllowHosts
    ? { allowHosts: options.notifyAllowHosts }
    : {};
  const defaultNotify = options.notify ? defaultNotifyTargets(options.notify) : undefined;
  const events = new JobEventHub();
  const manager: Manager = new Manager({
    store,
    events,
    // Secrets go into requests only as they are sent: never into the store, the outbox or a log.
    bus: secretResolvingBus(bus, secrets),
    defaultNotify,
    notifyChecks: { rules: deliveryRules, secrets },
    timers,
    telemetry: { logger, metrics },
    maxFanOut: options.maxFanOut,
    fanOutSlice: options.fanOutSlice,
    maxReplyBytes: options.maxReplyBytes,
    maxFanOutBytes: options.maxFanOutBytes,
    maxTreeJobs: options.maxTreeJobs,
    requestTtlMs,
    queueRules,
    replyAuth: options.replyAuth,
    onRegistered: async (definition) => {
      for (const vhost of definition.vhosts ?? []) consumeVhost(vhost);
      // Its schedules may have changed: the next pass counts them (not awaited: it starts jobs). The
      // config's workflows, registered before recovery, wait for the first pass after it.
      if (schedulesStarted && (definition.schedules || schedules.hasSchedules)) void schedules.poke();
    },
  });
  // The poison-reply policy; its crash journal is the database, each start of serve a new holder.
  const replies = new ReplyPolicy({
    manager,
    journal: store,
    holder: randomUUID(),
    logger,
    metrics,
  });
  let schedulesStarted = false;
  const schedules: LocalSchedules = new LocalSchedules({
    registry: store,
    cursors: store,
    startJob: (params) => manager.startJob(params),
    logger,
  });

  const deliveries = new DeliveryPump({ log: store, secrets, rules: deliveryRules, logger, metrics });

  try {
    if (defaultNotify) await manager.checkNotify(defaultNotify);
    await applyConfigPrefixes(queuePrefixes, manager, logger);
    await registerConfigWorkflows(definitions, { manager, store, logger });
    await rearmTimers(store, timers);
    await manager.recover();
    const released = await deliveries.releaseTaken();
    if (released) logger.info('webhook deliveries in hand when serve stopped are posted again', { released });
    await adoptAwaitedRequests(store, manager);
  } catch (error) {
    timers.stop();
    await bus.close().catch(() => {});
    await store.close();
    throw error;
  }

  const shutdown = new AbortController();
  const service = new ApiService({ manager, store, bus, queueRules });
  // Each scrape of /metrics looks at every namespace's step queues (ready messages and consumers).
  metrics.watchQueues(async () => {
    const queues: QueueGaugeEntry[] = [];
    for (const namespace of await service.namespaces()) {
      for (const report of await service.queues(namespace)) queues.push({ ...report, namespace });
    }
    return queues;
  });
  const listeners = await listenHttp(
    {
      shutdown: shutdown.signal,
      service,
      logger,
      token: options.token,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      metricsText: () => metrics.text(),
      dashboard: options.dashboard,
      events: new EventStreams(events, shutdown.signal),
    },
    {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 8080,
      healthPort: options.healthPort,
      bounds,
      policy,
    },
  );
  const { url, healthUrl } = listeners;
  const connections = bounds.maxConnections + (healthUrl ? HEALTH_MAX_CONNECTIONS : 0);
  reportDescriptors(await readDescriptors(), connections, logger);

  consumeVhost(null);
  for (const workflow of await store.listWorkflows())
    for (const vhost of workflow.vhosts) consumeVhost(vhost);

  const retention = options.retainMs
    ? startRetention(store, options.retainMs, options.archiveDir, logger)
    : undefined;
  // Off every job's path: deliveries recorded before a crash are posted now.
  deliveries.start();
  // After recovery: ticks missed while serve was down start now (catch-up), then on their times.
  schedulesStarted = true;
  void schedules.poke();
  logger.info('serving', {
    url,
    ...(healthUrl ? { health: `${healthUrl}/healthz` } : {}),
    db: options.db ?? 'switchyard.db',
    synchronous: store.settings().synchronous,
    bus: description,
    workflows: definitions.map((definition) => definition.name),
  });

  let closing: Promise<void> | undefined;
  return {
    url,
    healthUrl,
    manager,
    store,
    broker,
    failed,
    close: () => {
      closing ??= (async () => {
        clearInterval(retention);
        shutdown.abort();
        await listeners.close(CLOSING_MS);
        // Posts in hand are aborted: each is posted again after the next start.
        await settlesWithin(deliveries.stop(), CLOSING_MS);
        await Promise.all([...consumers.values()].map((consumer) => consumer.stop()));
        await settlesWithin(schedules.stop(), CLOSING_MS);
        if (!(await settlesWithin(manager.drain(), options.drainTimeoutMs ?? 5_000))) {
          logger.warn('outbox not drained before the deadline; the rest is sent on the next start', {
            pending: manager.outboxPending,
          });
        }
        manager.stop();
        timers.stop();
        await settlesWithin(
          bus.close().catch((error: unknown) => logger.warn('closing the bus failed', { error })),
          CLOSING_MS,
        );
        // Closing the bus ends the send in hand (its confirms fail): the pump stops before the store closes.
        await settlesWithin(manager.drain(), CLOSING_MS);
        await store.close();
        logger.info('stopped');
      })();
      return closing;
    },
  };
}

/** `--notify-url`, `--notify-events`, `--notify-secret` as the default target, or an error naming the flag. */
function defaultNotifyTargets(notify: NonNullable<ServeOptions['notify']>): NotifyTarget[] {
  const read = readNotify({ url: notify.url, events: [...notify.events], secret: notify.secret });
  if (read.ok) return read.targets;
  const flags: Record<string, string> = {
    url: '--notify-url',
    events: '--notify-events',
    secret: '--notify-secret',
  };
  throw new Error(
    read.problems
      .map((problem) => `${flags[String(problem.at[0])] ?? '--notify-url'}: ${problem.message}`)
      .join('\n'),
  );
}

/**
 * After a restart: the requests running jobs wait for are watched again, so that one whose copy
 * expires while its step still waits is sent again (`RequestRefresher`).
 */
async function adoptAwaitedRequests(store: Store, manager: Manager): Promise<void> {
  const refresher = manager.refresher;
  if (!refresher) return;
  // A job waiting for someone is running too (listed as `waiting`): its other steps may await requests.
  for (const status of ['running', 'waiting'] as const) {
    let cursor: string | undefined;
    do {
      const page = await store.queryJobs({ status, includeChildren: true, limit: 1000, cursor });
      refresher.adopt(page.jobs);
      cursor = page.cursor;
    } while (cursor);
  }
}

/** How long overdue timers wait after a restart, so replies that arrived meanwhile are read first. */
const RESTART_GRACE_MS = 5_000;

/** Every stored timer goes back into the process (the local store holds at most one per running step). */
async function rearmTimers(store: Pick<Housekeeping, 'listTimers'>, timers: LocalTimers): Promise<void> {
  const earliest = Date.now() + RESTART_GRACE_MS;
  const stored = await store.listTimers({ limit: Number.MAX_SAFE_INTEGER });
  await timers.arm(stored.map((timer) => (timer.at < earliest ? { ...timer, at: earliest } : timer)));
}

/** How long `close` waits for the bus to close, then for the outbox pump to stop. */
const CLOSING_MS = 2_000;

/** Whether `work` settled within `ms` (it goes on regardless). */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, sleep(ms).then(() => false)]);
}

const sleep = (ms: number): Promise<undefined> =>
  new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());

function startRetention(
  store: Pick<Housekeeping, 'deleteFinishedJobs'> & Pick<JobQueries, 'queryJobs' | 'listChildren'>,
  retainMs: number,
  archiveDir: string | undefined,
  logger: Logger,
): NodeJS.Timeout {
  const sweep = async () => {
    try {
      const cutoff = Date.now() - retainMs;
      // Archived first, and durably: a sweep whose archive fails deletes nothing.
      if (archiveDir !== undefined) {
        const archived = await archiveFinishedJobs(store, archiveDir, cutoff);
        if (archived) logger.info('archived finished jobs past retention', { archived, dir: archiveDir });
      }
      const deleted = await store.deleteFinishedJobs(cutoff);
      if (deleted) logger.info('deleted finished jobs past retention', { deleted });
    } catch (error) {
      logger.warn('retention sweep failed', { error });
    }
  };
  void sweep();
  const timer = setInterval(sweep, Math.min(retainMs, 10 * 60_000));
  timer.unref();
  return timer;
}
