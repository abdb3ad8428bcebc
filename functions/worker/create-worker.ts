import type { JsonObject } from '../../engine/index.js';
import { defaultWorkerName } from '../transport/worker-name.js';
import type { WorkerDelivery, WorkerTransport } from '../transport/worker-transport.js';
import { HeldRequest, settlesWithin } from './in-hand.js';
import { requestHandling } from './request-handling.js';
import {
  consoleLogger,
  messageOf,
  type WorkerHandler,
  type WorkerLogger,
  type WorkerResult,
} from './worker-types.js';

export type { WorkerContext, WorkerHandler, WorkerLogger, WorkerResult } from './worker-types.js';

export interface WorkerOptions<In extends JsonObject = JsonObject, Out extends WorkerResult = WorkerResult> {
  /** The step queue to consume. */
  queue: string;
  handler: WorkerHandler<In, Out>;
  /** Requests handled at once. @default 1 */
  concurrency?: number;
  /** How requests arrive and replies leave; the worker closes it when it stops. @default RabbitMQ at `amqpUrl` */
  transport?: WorkerTransport;
  /** RabbitMQ to use when no transport is given. @default env AMQP_URL, env AMQP_SERVER, or amqp://guest:guest@127.0.0.1:5672 */
  amqpUrl?: string;
  /** Deliveries of a request whose handler fails before the SDK answers with an error reply. @default 5 */
  maxDeliveries?: number;
  logger?: WorkerLogger;
  /**
   * How the worker names itself on its replies (`x-worker`): the job's history shows it beside each
   * attempt it answered; `''` sends no name. @default `<host>:<pid>`
   */
  workerName?: string;
  /**
   * How long `stop()` (and SIGTERM or SIGINT under `runWorker`) takes at most. Requests in hand get
   * all but the last fifth of it (at most 2 s) to finish; those still running are then handed back
   * for another worker, and their late results dropped. @default 10000
   */
  shutdownTimeoutMs?: number;
}

export interface Worker {
  /** Resolves once the worker consumes its queue. */
  start(): Promise<void>;
  /**
   * Stops taking requests, finishes the ones in hand (reply, acknowledge), then disconnects, all
   * within `shutdownTimeoutMs`: requests whose handlers run longer are handed back. A start still
   * connecting is abandoned (it rejects).
   */
  stop(): Promise<void>;
}

/** How long a worker's stop takes at most, unless `shutdownTimeoutMs` says otherwise. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * A worker for one step queue: parses each request, calls the handler, replies with the same
 * correlation id and attempt, and acknowledges the request only once the reply is with the broker.
 * A handler that throws gets the request again (at-least-once), up to `maxDeliveries` times in this
 * process; then, or at once for a `WorkerError` or a request that is not a JSON object, the attempt
 * is answered with an error reply, which the manager retries as the step's `retries` say. A
 * `WorkerError` with `{ retryable: false }` marks its reply `x-retryable: false`: the step fails at once.
 *
 * Unlike `runWorker`, it leaves the process alone: start and stop it yourself (several in one
 * process, in tests, beside a web server).
 *
 * @typeParam In - the request body's shape (the step's input): a `type` (not an `interface`) of JSON values.
 * @typeParam Out - the reply's shape.
 * @example
 * ```ts
 * import { createWorker } from 'switchyard-worker';
 *
 * const workers = [
 *   createWorker<{ text: string }, { words: number }>({
 *     queue: 'count-words',
 *     handler: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
 *   }),
 *   createWorker({ queue: 'store-title', handler: (input) => ({ title: String(input.title ?? '') }) }),
 * ];
 * await Promise.all(workers.map((worker) => worker.start()));
 * process.once('SIGTERM', () => void Promise.all(workers.map((worker) => worker.stop())));
 * ```
 */
export function createWorker(options: WorkerOptions): Worker;
export function createWorker<In extends JsonObject, Out extends WorkerResult = WorkerResult>(
  options: WorkerOptions<In, Out>,
): Worker;
export function createWorker<In extends JsonObject, Out extends WorkerResult>(
  options: WorkerOptions<In, Out>,
): Worker {
  const concurrency = options.concurrency ?? 1;
  const maxDeliveries = options.maxDeliveries ?? 5;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`concurrency must be a whole number of at least 1, not ${concurrency}`);
  }
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
    throw new Error(`maxDeliveries must be a whole number of at least 1, not ${maxDeliveries}`);
  }
  if (!Number.isFinite(shutdownTimeoutMs) || shutdownTimeoutMs < 0) {
    throw new Error(`shutdownTimeoutMs must be a number of milliseconds, not ${shutdownTimeoutMs}`);
  }
  const logger = options.logger ?? consoleLogger;
  const inHand = new Map<Promise<void>, HeldRequest>();
  let transport: WorkerTransport | undefined = options.transport;
  let started: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  let stopping = false;
  const handle = requestHandling({
    queue: options.queue,
    handler: options.handler,
    maxDeliveries,
    logger,
    worker: options.workerName ?? defaultWorkerName(),
    send: async (replyTo, correlationId, body, says) => {
      if (!transport) throw new Error('the worker has not started');
      await transport.reply(replyTo, correlationId, body, says);
    },
  });

  function track(received: WorkerDelivery): Promise<void> {
    const delivery = new HeldRequest(received);
    const handling = handle(delivery).catch((error: unknown) =>
      logger.error(`${options.queue}: handling ${delivery.correlationId} failed`, {
        error: messageOf(error),
      }),
    );
    inHand.set(handling, delivery);
    return handling.finally(() => inHand.delete(handling));
  }

  async function start(): Promise<void> {
    transport ??= await defaultTransport(options, logger);
    const stoppedFirst = new Error(`${options.queue}: the worker was stopped before it consumed its queue`);
    try {
      if (!stopping) await transport.consume(options.queue, concurrency, track);
      // A stop that came while consume() was under way (SQS: looking up the queue) must not leave it consuming.
      if (stopping) throw stoppedFirst;
    } catch (error) {
      await settlesWithin(transport.close(), CLOSE_TIMEOUT_MS);
      throw stopping ? stoppedFirst : error;
    }
    logger.info(`${options.queue}: worker started (concurrency ${concurrency})`);
  }

  async function stop(): Promise<void> {
    stopping = true;
    const deadline = Date.now() + shutdownTimeoutMs;
    const handBackAt = deadline - Math.min(HAND_BACK_RESERVE_MS, shutdownTimeoutMs / 5);
    const current = transport;
    if (current) {
      // Each step waits only until its deadline: a broker that does not answer must not hold the stop.
      await settlesWithin(current.stopConsuming(), handBackAt - Date.now());
      if (!(await settlesWithin(Promise.allSettled(inHand.keys()), handBackAt - Date.now()))) {
        await settlesWithin(handBack(), deadline - Date.now());
      }
      await settlesWithin(current.close(), deadline - Date.now());
    }
    logger.info(`${options.queue}: worker stopped`);
  }

  function handBack(): Promise<unknown> {
    return Promise.allSettled(
      [...inHand.values()].map((delivery) => {
        logger.warn(
          `${options.queue}: ${delivery.correlationId} still running at the shutdown deadline; handing it back`,
        );
        return delivery.handBack();
      }),
    );
  }

  return {
    start() {
      if (stopped) return Promise.reject(new Error('the worker was stopped'));
      started ??= start();
      return started;
    },
    stop() {
      stopped ??= stop();
      return stopped;
    },
  };
}

/** The part of `shutdownTimeoutMs` kept to hand back requests and disconnect: at most this, a fifth below 10 s. */
const HAND_BACK_RESERVE_MS = 2_000;
/** How long a start that failed waits for its transport to close. */
const CLOSE_TIMEOUT_MS = 2_000;

/** The workers `runWorker` started in this process: one signal stops them all, then the process exits. */
const owned = new Map<Worker, { queue: string; logger: WorkerLogger; shutdownTimeoutMs: number }>();
let ownedStopping = false;

function stopOwnedWorkers(signal: NodeJS.Signals): void {
  if (ownedStopping) process.exit(1);
  ownedStopping = true;
  const entries = [...owned];
  const longest = Math.max(0, ...entries.map(([, entry]) => entry.shutdownTimeoutMs));
  for (const [, entry] of entries)
    entry.logger.info(`${entry.queue}: ${signal}: stopping within ${entry.shutdownTimeoutMs} ms`);
  // A backstop: stop() keeps to its deadline, but nothing may hold the process past it.
  setTimeout(() => {
    for (const [, entry] of entries)
      entry.logger.error(`${entry.queue}: not stopped within ${entry.shutdownTimeoutMs} ms; exiting`);
    process.exit(1);
  }, longest + EXIT_BACKSTOP_MS).unref();
  void Promise.all(
    entries.map(([worker, entry]) =>
      worker.stop().then(
        () => true,
        (error: unknown) => {
          entry.logger.error(`${entry.queue}: stopping failed: ${messageOf(error)}`);
          return false;
        },
      ),
    ),
  ).then((stopped) => process.exit(stopped.every(Boolean) ? 0 : 1));
}

/**
 * Creates and starts a worker, and owns the process: on SIGTERM or SIGINT it stops the worker (no
 * new requests, the ones in hand finished or handed back, within `shutdownTimeoutMs`) and exits 0;
 * a second signal exits at once. A start the broker refuses for good (login, vhost) or that fails
 * otherwise logs one line and exits 1; a broker that cannot be reached is tried again until it can.
 *
 * Several workers in one process: call it once per queue; one signal stops them all, and the process
 * exits once every one has stopped.
 *
 * @typeParam In - the request body's shape (the step's input); a JSON object.
 * @typeParam Out - the reply's shape (the step's output); a JSON object, or null/undefined for `{}`.
 * @example
 * ```ts
 * import { runWorker, WorkerError } from 'switchyard-worker';
 *
 * type Order = { orderId: string; amount: number };
 * await runWorker<Order, { chargeId: string }>({
 *   queue: 'charge-card',
 *   concurrency: 4,
 *   handler: async (order, { attempt }) => {
 *     if (order.amount <= 0) throw new WorkerError('nothing to charge', { retryable: false });
 *     return { chargeId: `ch-${order.orderId}-${attempt}` };
 *   },
 * });
 * ```
 */
export async function runWorker(options: WorkerOptions): Promise<Worker>;
export async function runWorker<In extends JsonObject, Out extends WorkerResult = WorkerResult>(
  options: WorkerOptions<In, Out>,
): Promise<Worker>;
export async function runWorker<In extends JsonObject, Out extends WorkerResult>(
  options: WorkerOptions<In, Out>,
): Promise<Worker> {
  const worker = createWorker(options);
  const logger = options.logger ?? consoleLogger;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  if (owned.size === 0) {
    process.on('SIGTERM', stopOwnedWorkers);
    process.on('SIGINT', stopOwnedWorkers);
  }
  owned.set(worker, { queue: options.queue, logger, shutdownTimeoutMs });
  try {
    await worker.start();
  } catch (error) {
    // Stopped while starting: the signal's stop exits.
    if (ownedStopping) return worker;
    logger.error(`${options.queue}: cannot start: ${messageOf(error)}`);
    process.exit(1);
  }
  return worker;
}

/** How long past `shutdownTimeoutMs` a signalled process may take before it is made to exit. */
const EXIT_BACKSTOP_MS = 1_000;

async function defaultTransport(
  options: Pick<WorkerOptions, 'queue' | 'amqpUrl'>,
  logger: WorkerLogger,
): Promise<WorkerTransport> {
  // Loaded only when needed, so a worker on another transport never loads amqplib.
  const { RabbitMqWorkerTransport } = await import('./transports/rabbitmq.js');
  return new RabbitMqWorkerTransport({
    url: amqpUrlFrom(options.amqpUrl),
    connectionName: `switchyard-worker:${options.queue}`,
    logger,
  });
}

/**
 * The RabbitMQ URL a worker uses: `explicit` (the `amqpUrl` option), then `AMQP_URL`, then
 * `AMQP_SERVER` (the original's variable), then `amqp://guest:guest@127.0.0.1:5672`. `AMQP_SERVER`
 * may be a URL or, as in older setups, just `host[:port]`.
 *
 * @example
 * ```ts
 * amqpUrlFrom(undefined, { AMQP_SERVER: 'rabbit:5672' }); // 'amqp://rabbit:5672'
 * ```
 */
export function amqpUrlFrom(
  explicit: string | undefined,
  // Not NodeJS.ProcessEnv: the SDK's declarations name no type of @types/node, which a worker's
  // project may not have.
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (explicit) return explicit;
  if (env.AMQP_URL) return env.AMQP_URL;
  const server = env.AMQP_SERVER;
  if (server) return server.includes('://') ? server : `amqp://${server}`;
  return 'amqp://guest:guest@127.0.0.1:5672';
}
