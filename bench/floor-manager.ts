import { randomUUID } from 'node:crypto';
import type { InboundReply, StepRequest } from '../engine/index.js';
import { RabbitMqBus } from '../functions/adapters/rabbitmq/bus.js';
import { benchQueues } from './workloads.js';

/*
 * The broker's floor: diamonds driven over RabbitMQ by a manager that does nothing else. The
 * messages are serve's (RabbitMqBus: batched publishes with confirms; its reply consumer: batches
 * acknowledged with one `multiple` ack once the requests they caused are confirmed), the workers
 * are the benchmark's echo workers; there is no store, no engine, no HTTP. What RabbitMQ costs
 * here, it costs any manager that speaks the protocol.
 *
 * Environment: AMQP_URL, BENCH_PREFIX (the run's queues), BENCH_JOBS (measured diamonds),
 * BENCH_WARM_JOBS, BENCH_IN_FLIGHT (diamonds running at once). Prints `warm` after the warm-up,
 * starts the measured diamonds on SIGUSR2, then prints `done <wall seconds>`.
 */

const env = process.env;
const url = env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = env.BENCH_PREFIX ?? 'bench-floor-';
const measuredJobs = Number(env.BENCH_JOBS ?? 10_000);
const warmJobs = Number(env.BENCH_WARM_JOBS ?? 3_000);
const inFlight = Number(env.BENCH_IN_FLIGHT ?? 100);
const queues = benchQueues(prefix);
const replyQueue = `${prefix}replies`;

/** Steps of a running diamond not replied to yet; s4 is sent once s2 and s3 have both replied. */
const running = new Map<string, Set<string>>();
let toStart = 0;
let finished = 0;
let onAllFinished: (() => void) | undefined;

const request = (jobId: string, step: 's1' | 's2' | 's3' | 's4'): StepRequest => ({
  jobId,
  step,
  queue: queues[step],
  vhost: null,
  correlationId: `${jobId}:${step}`,
  attempt: 1,
  body: {},
});

function start(requests: StepRequest[]): void {
  while (toStart > 0 && running.size < inFlight) {
    toStart--;
    const id = randomUUID();
    running.set(id, new Set(['s1']));
    requests.push(request(id, 's1'));
  }
}

function advance(reply: InboundReply, requests: StepRequest[]): void {
  const [jobId = '', step = ''] = (reply.correlationId ?? '').split(':');
  const waiting = running.get(jobId);
  if (!waiting?.delete(step)) return;
  if (step === 's1') {
    waiting.add('s2').add('s3');
    requests.push(request(jobId, 's2'), request(jobId, 's3'));
  } else if ((step === 's2' || step === 's3') && waiting.size === 0) {
    waiting.add('s4');
    requests.push(request(jobId, 's4'));
  } else if (step === 's4') {
    running.delete(jobId);
    finished++;
  }
}

const bus = new RabbitMqBus({ url, replyQueue, connectionName: 'switchyard-bench-floor' });
await bus.ensureQueues(Object.values(queues).map((queue) => ({ queue, vhost: null })));
await bus.consumeReplies(
  async (deliveries) => {
    const requests: StepRequest[] = [];
    for (const { reply } of deliveries) advance(reply, requests);
    start(requests);
    await bus.send(requests);
    if (running.size === 0 && toStart === 0) onAllFinished?.();
    return deliveries.map(() => ({ kind: 'done' }));
  },
  { prefetch: 1000 },
);

async function diamonds(count: number): Promise<number> {
  const began = process.hrtime.bigint();
  finished = 0;
  toStart = count;
  const allFinished = new Promise<void>((resolve) => {
    onAllFinished = resolve;
  });
  const requests: StepRequest[] = [];
  start(requests);
  await bus.send(requests);
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
  bus.close().finally(() => process.exit(0));
});
process.stdout.write('warm\n');
