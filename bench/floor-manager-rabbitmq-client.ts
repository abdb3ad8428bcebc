import { randomUUID } from 'node:crypto';
import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { REPLY_QUEUE_HEADER } from '../functions/adapters/rabbitmq/dead-letters.js';
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
const measuredJobs = Number(env.BENCH_JOBS ?? 10_000);
const warmJobs = Number(env.BENCH_WARM_JOBS ?? 3_000);
const inFlight = Number(env.BENCH_IN_FLIGHT ?? 100);
const queues = benchQueues(prefix);
const replyQueue = `${prefix}replies`;
type Step = 's1' | 's2' | 's3' | 's4';

const rabbit = new Connection({ url, noDelay: true, connectionName: 'switchyard-bench-floor-rmqc' });
const publisher = await rabbit.acquire();
await publisher.confirmSelect();
const consumer = await rabbit.acquire();
for (const queue of [...Object.values(queues), replyQueue]) {
  await publisher.queueDeclare({ queue, durable: true });
}

const running = new Map<string, Set<string>>();
let toStart = 0;
let finished = 0;
let onAllFinished: (() => void) | undefined;
const EMPTY_BODY = Buffer.from('{}');

function publish(jobId: string, step: Step): Promise<void> {
  return publisher.basicPublish(
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
  );
}

function start(sends: Promise<void>[]): void {
  while (toStart > 0 && running.size < inFlight) {
    toStart--;
    const id = randomUUID();
    running.set(id, new Set(['s1']));
    sends.push(publish(id, 's1'));
  }
}

function advance(correlationId: string, sends: Promise<void>[]): void {
  const [jobId = '', step = ''] = correlationId.split(':');
  const waiting = running.get(jobId);
  if (!waiting?.delete(step)) return;
  if (step === 's1') {
    waiting.add('s2').add('s3');
    sends.push(publish(jobId, 's2'), publish(jobId, 's3'));
  } else if ((step === 's2' || step === 's3') && waiting.size === 0) {
    waiting.add('s4');
    sends.push(publish(jobId, 's4'));
  } else if (step === 's4') {
    running.delete(jobId);
    finished++;
  }
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
    const batch = buffer.splice(0, 500);
    const sends: Promise<void>[] = [];
    for (const message of batch) advance(String(message.correlationId ?? ''), sends);
    start(sends);
    await Promise.all(sends);
    if (running.size === 0 && toStart === 0) onAllFinished?.();
    consumer.basicAck({ deliveryTag: (batch.at(-1) as AsyncMessage).deliveryTag, multiple: true });
  }
}

await consumer.basicQos({ prefetchCount: 1000 });
await consumer.basicConsume({ queue: replyQueue }, (message) => {
  buffer.push(message);
  scheduleDrain();
});

async function diamonds(count: number): Promise<number> {
  const began = process.hrtime.bigint();
  finished = 0;
  toStart = count;
  const allFinished = new Promise<void>((resolve) => {
    onAllFinished = resolve;
  });
  const sends: Promise<void>[] = [];
  start(sends);
  await Promise.all(sends);
  await allFinished;
  if (finished !== count) throw new Error(`${finished} of ${count} diamonds finished`);
  return Number(process.hrtime.bigint() - began) / 1e9;
}

await diamonds(warmJobs);
process.once('SIGUSR2', () => {
  diamonds(measuredJobs).then(
    (seconds) => process.stdout.write(`done ${seconds}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
});
process.once('SIGTERM', () => {
  // The channels first: the connection's close waits for the channels acquired from it.
  Promise.allSettled([consumer.close(), publisher.close()])
    .then(() => rabbit.close())
    .finally(() => process.exit(0));
});
process.stdout.write('warm\n');
