import { connect } from 'amqplib';
import { deadLetterQueueOf } from '../functions/adapters/rabbitmq/dead-letters.js';
import { type BenchChild, spawnBenchScript, waitFor } from './child.js';
import { benchQueues, noOpQueues } from './workloads.js';

/* The RabbitMQ side every local run shares: the broker's address, the echo workers, the queues. */

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const WORKER_PREFETCH = 200;

export async function startWorkers(prefix: string): Promise<BenchChild> {
  const queues = benchQueues(prefix);
  return spawnBenchScript('echo-workers.ts', {
    name: 'echo-workers',
    env: {
      AMQP_URL,
      BENCH_NOOP_QUEUES: noOpQueues(queues).join(','),
      BENCH_LIST_QUEUE: queues.list,
      BENCH_PREFETCH: String(WORKER_PREFETCH),
    },
    readyLine: 'ready',
  });
}

/**
 * Waits until serve consumes its reply queue. serve answers HTTP before its reply consumer has
 * declared the queue, and a reply sent to a queue that does not exist yet is dropped by RabbitMQ,
 * so the driver starts only once the queue has its consumer.
 */
export async function replyQueueConsumed(queue: string): Promise<void> {
  const model = await connect(AMQP_URL, { clientProperties: { connection_name: 'switchyard-bench-probe' } });
  model.on('error', () => {});
  try {
    await waitFor(
      `serve to consume ${queue}`,
      async () => {
        const channel = await model.createChannel();
        channel.on('error', () => {});
        try {
          const { consumerCount } = await channel.checkQueue(queue);
          return consumerCount > 0 ? true : undefined;
        } finally {
          await channel.close().catch(() => {});
        }
      },
      30_000,
      50,
    );
  } finally {
    await model.close().catch(() => {});
  }
}

/**
 * Deletes the queues, and the dead-letter queue serve declares beside each reply queue
 * (`<reply queue>.dead-letters`), which every run used to leave behind.
 */
export async function deleteQueues(names: string[]): Promise<void> {
  const all = [...names, ...names.filter((name) => name.endsWith('replies')).map(deadLetterQueueOf)];
  const model = await connect(AMQP_URL, {
    clientProperties: { connection_name: 'switchyard-bench-cleanup' },
  });
  model.on('error', () => {});
  try {
    for (const name of all) {
      const channel = await model.createChannel();
      channel.on('error', () => {});
      await channel.deleteQueue(name).catch(() => {});
      await channel.close().catch(() => {});
    }
  } finally {
    await model.close().catch(() => {});
  }
}
