import { type ChannelModel, connect } from 'amqplib';
import { AMQP_URL } from './rabbitmq.js';

export interface NackingWorker {
  /** Deliveries taken so far (each one NACKed with requeue). */
  readonly count: number;
  /** When the last delivery came (ms since the epoch), 0 before the first. */
  readonly lastAt: number;
  /** The `x-attempt` headers seen, without repeats. */
  readonly attempts: Set<number>;
  stop(): Promise<void>;
}

/**
 * A worker as the original's Python worker is when its handler throws: it NACKs every delivery with
 * requeue, for ever. `declare`: declare the queue durable with no arguments first, as the original
 * does (off for a queue the manager made a quorum queue: that declaration would be refused).
 */
export async function startNackingWorker(
  queue: string,
  options: { declare?: boolean; connectionName?: string } = {},
): Promise<NackingWorker> {
  const model: ChannelModel = await connect(AMQP_URL, {
    clientProperties: { connection_name: options.connectionName ?? 'switchyard-test-nacking-worker' },
  });
  model.on('error', () => {});
  const channel = await model.createChannel();
  channel.on('error', () => {});
  if (options.declare ?? true) await channel.assertQueue(queue, { durable: true });
  await channel.prefetch(10);
  const state = { count: 0, lastAt: 0, attempts: new Set<number>() };
  await channel.consume(queue, (message) => {
    if (!message) return;
    state.count++;
    state.lastAt = Date.now();
    state.attempts.add(Number(message.properties.headers?.['x-attempt']));
    channel.nack(message, false, true);
  });
  return {
    get count() {
      return state.count;
    },
    get lastAt() {
      return state.lastAt;
    },
    attempts: state.attempts,
    stop: async () => {
      await model.close().catch(() => {});
    },
  };
}
