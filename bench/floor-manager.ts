import type { StepRequest } from '../engine/index.js';
import { RabbitMqBus } from '../functions/adapters/rabbitmq/bus.js';
import { FloorDiamonds, floorSettings, serveFloorRuns } from './floor-diamonds.js';
import { benchQueues } from './workloads.js';

/*
 * The broker's floor: diamonds driven over RabbitMQ by a manager that does nothing else. The
 * messages are serve's (RabbitMqBus: batched publishes with confirms; its reply consumer: batches
 * acknowledged with one `multiple` ack once the requests they caused are confirmed), the workers
 * are the benchmark's echo workers; there is no store, no engine, no HTTP. What RabbitMQ costs
 * here, it costs any manager that speaks the protocol.
 *
 * Environment: AMQP_URL, BENCH_PREFIX (the run's queues), and bench/floor-diamonds.ts's. Prints
 * `warm` after the warm-up, starts the measured diamonds on SIGUSR2, then prints
 * `done <wall seconds>`.
 */

const env = process.env;
const url = env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = env.BENCH_PREFIX ?? 'bench-floor-';
const queues = benchQueues(prefix);
const replyQueue = `${prefix}replies`;
const settings = floorSettings(env);

/** The requests of the batch in hand. */
let batch: StepRequest[] = [];
const diamonds = new FloorDiamonds(settings.inFlight, queues, (request) => batch.push(request));

function sendBatch(): Promise<void> {
  const requests = batch;
  batch = [];
  return requests.length ? bus.send(requests) : Promise.resolve();
}

const bus = new RabbitMqBus({ url, replyQueue, connectionName: 'switchyard-bench-floor' });
await bus.ensureQueues(Object.values(queues).map((queue) => ({ queue, vhost: null })));
await bus.consumeReplies(
  async (deliveries) => {
    for (const { reply } of deliveries) diamonds.replied(reply.correlationId ?? '');
    diamonds.startMore();
    await sendBatch();
    diamonds.batchSent();
    return deliveries.map(() => ({ kind: 'done' }));
  },
  { prefetch: 1000 },
);

await serveFloorRuns(
  (count) => diamonds.run(count, sendBatch),
  () => bus.close(),
  settings,
);
