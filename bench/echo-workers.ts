import { type ConsumeMessage, connect } from 'amqplib';
import { listItems } from './workloads.js';

/*
 * The benchmark's workers, in a process of their own: plain amqplib as a worker of the original
 * workflow-manager is written (no SDK), with TCP_NODELAY. Each takes a request, replies
 * persistently to `reply_to` with the same correlation id, then acknowledges. `BENCH_NOOP_QUEUES`
 * reply `{}`; `BENCH_LIST_QUEUE` replies `{ items: [0 .. count-1] }`.
 *
 * Environment: AMQP_URL, BENCH_NOOP_QUEUES (comma-separated), BENCH_LIST_QUEUE, BENCH_PREFETCH
 * (per consumer, default 200). Prints `ready` once every queue is consumed; SIGTERM closes.
 */

const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const noOpQueues = (process.env.BENCH_NOOP_QUEUES ?? '').split(',').filter(Boolean);
const listQueue = process.env.BENCH_LIST_QUEUE;
const prefetch = Number(process.env.BENCH_PREFETCH ?? 200);

const EMPTY = Buffer.from('{}');

// TCP_NODELAY, as AMQP clients of other languages (Go, Java, .NET, pika) set by default and amqplib
// does not: without it a reply that follows a write not yet acknowledged waits up to 40 ms for the
// broker's delayed ACK (the 1,000-item fan-out's listing step took 45 ms instead of 4).
const model = await connect(url, {
  noDelay: true,
  clientProperties: { connection_name: 'switchyard-bench-workers' },
});
const channel = await model.createChannel();
await channel.prefetch(prefetch);

function reply(message: ConsumeMessage, body: Buffer): void {
  channel.sendToQueue(String(message.properties.replyTo), body, {
    correlationId: message.properties.correlationId,
    contentType: 'application/json',
    persistent: true,
  });
  channel.ack(message);
}

for (const queue of noOpQueues) {
  await channel.assertQueue(queue, { durable: true });
  await channel.consume(queue, (message) => {
    if (message) reply(message, EMPTY);
  });
}
if (listQueue) {
  await channel.assertQueue(listQueue, { durable: true });
  await channel.consume(listQueue, (message) => {
    if (!message) return;
    const input = JSON.parse(message.content.toString()) as Record<string, unknown>;
    reply(message, Buffer.from(JSON.stringify(listItems(input))));
  });
}

process.once('SIGTERM', () => {
  model.close().finally(() => process.exit(0));
});
process.stdout.write('ready\n');
