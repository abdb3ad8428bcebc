import type { Message } from 'amqplib';
import type { RepliesMqHandler } from '../../functions/handlers/replies-mq.js';
import { aLambdaContext, amazonMqMessageFromAmqp } from './aws-events.js';
import { openTestChannel } from './rabbitmq.js';

export interface AmazonMqEventSourceOptions {
  /** Every n-th batch is handed over twice (an at-least-once delivery). */
  deliverTwiceEvery?: number;
  /** A new container after an invocation ran out of time; without it, invocations are not timed. */
  newHandler?: () => RepliesMqHandler;
  /** @default 60000 */
  functionTimeoutMs?: number;
  /** The mapping's BatchSize. @default 10 (the stack's) */
  batchSize?: number;
  /** The mapping's MaximumBatchingWindowInSeconds, in ms. @default 50 (the stack's is 1 s) */
  batchingWindowMs?: number;
}

export interface AmazonMqEventSource {
  stop(): Promise<void>;
  batches: number;
  /** Messages acknowledged after their invocation succeeded. */
  acknowledged: number;
  failed: number;
  redelivered: number;
  deaths: number;
  /** The most invocations that ran at once (Lambda: 1 per mapping on RabbitMQ). */
  mostAtOnce: number;
  /** How long each invocation took, ms, in order. */
  durations: number[];
}

/**
 * The Amazon MQ event source mapping on one queue, as Lambda runs it for RabbitMQ: one execution
 * environment per mapping ("Concurrency", https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html),
 * so one invocation at a time; a batch is handed over when it holds `batchSize` messages or its
 * window has passed; it is acknowledged when the handler returns, and requeued (nack) when it throws
 * (no partial batch response). With `newHandler`, an invocation that has not returned within
 * `functionTimeoutMs` dies (out of time, or of memory): its batch is requeued and the mapping goes on
 * with a new container.
 */
export async function amazonMqEventSource(
  queue: string,
  handler: RepliesMqHandler,
  options: AmazonMqEventSourceOptions = {},
): Promise<AmazonMqEventSource> {
  const batchSize = options.batchSize ?? 10;
  const { model, channel } = await openTestChannel();
  // The broker hands over no more than a batch while one is in hand: the consumer waits, as the mapping does.
  await channel.prefetch(batchSize);
  const state: AmazonMqEventSource = {
    batches: 0,
    acknowledged: 0,
    failed: 0,
    redelivered: 0,
    deaths: 0,
    mostAtOnce: 0,
    durations: [],
    stop: async () => {},
  };
  let current = handler;
  let batch: Message[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  let atOnce = 0;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const taken = batch;
    batch = [];
    if (taken.length === 0) return;
    running = running.then(async () => {
      state.batches++;
      atOnce++;
      const began = Date.now();
      state.mostAtOnce = Math.max(state.mostAtOnce, atOnce);
      const event = {
        eventSource: 'aws:rmq' as const,
        eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:switchyard:b-1',
        rmqMessagesByQueue: { [`${queue}::/`]: taken.map(amazonMqMessageFromAmqp) },
      };
      try {
        const invocation = current(event, aLambdaContext(options.functionTimeoutMs));
        if (options.newHandler && (await outOfTime(invocation, options.functionTimeoutMs ?? 60_000))) {
          state.deaths++;
          current = options.newHandler();
          for (const message of taken) channel.nack(message, false, true);
          return;
        }
        await invocation;
        if (options.deliverTwiceEvery && state.batches % options.deliverTwiceEvery === 0) {
          state.redelivered++;
          await current(event, aLambdaContext());
        }
        for (const message of taken) channel.ack(message);
        state.acknowledged += taken.length;
      } catch {
        state.failed++;
        for (const message of taken) channel.nack(message, false, true);
      } finally {
        atOnce--;
        state.durations.push(Date.now() - began);
      }
    });
  };
  const { consumerTag } = await channel.consume(queue, (message) => {
    if (!message) return;
    batch.push(message);
    if (batch.length >= batchSize) flush();
    else timer ??= setTimeout(flush, options.batchingWindowMs ?? 50);
  });
  state.stop = async () => {
    await channel.cancel(consumerTag).catch(() => {});
    flush();
    await running;
    await model.close().catch(() => {});
  };
  return state;
}

/** Whether `invocation` has not settled within `ms` (its rejection, if any, is left to the caller). */
async function outOfTime(invocation: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    return await Promise.race([
      invocation.then(
        () => false,
        () => false,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
