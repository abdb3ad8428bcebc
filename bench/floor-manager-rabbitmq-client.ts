import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { REPLY_QUEUE_HEADER } from '../functions/adapters/rabbitmq/dead-letters.js';
import { type DiamondStep, FloorDiamonds, floorSettings, serveFloorRuns } from './floor-diamonds.js';
import { benchQueues } from './workloads.js';

/*
 * bench/floor-manager.ts on another AMQP client, `rabbitmq-client`, for issue 34's question whether
 * a maintained alternative to amqplib costs less (bench/amqp-clients.ts runs the two side by side).
 * The same diamonds, messages and batching as the amqplib floor, written with the client's channel
 * methods: replies consumed with a prefetch of 1,000 and taken in batches of what arrived in one
 * I/O turn (at most 500); the requests a batch causes published persistent and mandatory with the
 * headers serve sets, their confirms awaited together; then the batch acknowledged with one
 * `multiple` ack. TCP_NODELAY as serve's connection sets it.
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

const EMPTY_BODY = Buffer.from('{}');

/** The confirms of the batch in hand. */
let batch: Promise<void>[] = [];
const diamonds = new FloorDiamonds(settings.inFlight, (jobId: string, step: DiamondStep) => {
  batch.push(
    publisher.basicPublish(
      {
        routingKey: queues[step],
        correlationId: `${jobId}:${step}`,
        replyTo: replyQueue,
        contentType: 'application/json',
        durable: true,
        mandatory: true,
        headers: { 'x-attempt': 1, [REPLY_QUEUE_HEADER]: replyQueue },
      },
      EMPTY_BODY,
    ),
  );
});

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
