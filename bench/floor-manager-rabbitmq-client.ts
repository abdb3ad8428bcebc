import { type AsyncMessage, Connection } from 'rabbitmq-client';
import type { StepRequest } from '../engine/index.js';
import { requestMessage } from '../functions/adapters/rabbitmq/request-message.js';
import { FloorDiamonds, floorSettings, serveFloorRuns } from './floor-diamonds.js';
import { benchQueues } from './workloads.js';

/*
 * bench/floor-manager.ts on another AMQP client, `rabbitmq-client`, for issue 34's question whether
 * a maintained alternative to amqplib costs less (bench/amqp-clients.ts runs the two side by side).
 * The same diamonds, messages and batching as the amqplib floor, written with the client's channel
 * methods: replies consumed with a prefetch of 1,000 and taken in batches of what arrived in one
 * I/O turn (at most 500); the requests a batch causes published as serve's messages
 * (`requestMessage`: persistent, mandatory, its headers), their confirms awaited together; then the
 * batch acknowledged with one `multiple` ack. TCP_NODELAY as serve's connection sets it.
 *
 * Environment, output and signals as bench/floor-manager.ts.
 */

const env = process.env;
const url = env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = env.BENCH_PREFIX ?? 'bench-floor-';
const settings = floorSettings(env);
const queues = benchQueues(prefix);
const replyQueue = `${prefix}replies`;

const rabbit = new Connection({ url, noDelay: true, connectionName: 'switchyard-bench-floor-rmqc' });
const publisher = await rabbit.acquire();
await publisher.confirmSelect();
const consumer = await rabbit.acquire();
for (const queue of [...Object.values(queues), replyQueue]) {
  await publisher.queueDeclare({ queue, durable: true });
}

/** serve's message for a request (requestMessage), published through rabbitmq-client. */
function publish(request: StepRequest): Promise<void> {
  const { queue, content, options } = requestMessage(request, {
    replyQueue,
    maxBytes: Number.POSITIVE_INFINITY,
    requestTtlMs: undefined,
    now: Date.now(),
  });
  return publisher.basicPublish(
    {
      routingKey: queue,
      correlationId: options.correlationId,
      replyTo: options.replyTo,
      contentType: options.contentType,
      durable: options.deliveryMode === 2,
      mandatory: options.mandatory,
      headers: options.headers,
      expiration: options.expiration === undefined ? undefined : String(options.expiration),
    },
    content,
  );
}

/** The confirms of the batch in hand. */
let batch: Promise<void>[] = [];
const diamonds = new FloorDiamonds(settings.inFlight, queues, (request) => batch.push(publish(request)));

async function sendBatch(): Promise<void> {
  const confirms = batch;
  batch = [];
  await Promise.all(confirms);
}

const buffer: AsyncMessage[] = [];
let draining = false;
let scheduled = false;

function scheduleDrain(): void {
  if (draining || scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    draining = true;
    drain().finally(() => {
      draining = false;
      if (buffer.length) scheduleDrain();
    });
  });
}

async function drain(): Promise<void> {
  while (buffer.length) {
    const messages = buffer.splice(0, 500);
    for (const message of messages) diamonds.replied(String(message.correlationId ?? ''));
    diamonds.startMore();
    await sendBatch();
    diamonds.batchSent();
    consumer.basicAck({ deliveryTag: (messages.at(-1) as AsyncMessage).deliveryTag, multiple: true });
  }
}

await consumer.basicQos({ prefetchCount: 1000 });
await consumer.basicConsume({ queue: replyQueue }, (message) => {
  buffer.push(message);
  scheduleDrain();
});

await serveFloorRuns(
  (count) => diamonds.run(count, sendBatch),
  // The channels first: the connection's close waits for the channels acquired from it.
  () =>
    Promise.allSettled([consumer.close(), publisher.close()])
      .then(() => rabbit.close())
      .then(() => {}),
  settings,
);
