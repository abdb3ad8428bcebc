import { type Channel, type ChannelModel, connect } from 'amqplib';
import { AMQP_URL } from './rabbitmq.js';

/** One message a scripted worker sends back: a reply, or a control reply (`type: error`, `suspend`…). */
export interface ScriptedReply {
  body: string;
  type?: 'error' | 'heartbeat' | 'abort' | 'suspend';
  /** More AMQP headers (`x-retryable`). */
  headers?: Record<string, unknown>;
}

export interface ScriptedDelivery {
  correlationId: string;
  /** The `x-attempt` header (0 when absent). */
  attempt: number;
  /** The `x-switchyard-token` header: the attempt's callback token (protocol.md#callbacks). */
  token: string;
  /** The broker's redelivered flag: a request handed back after a consumer died holding it. */
  redelivered: boolean;
  input: Record<string, unknown>;
  /** When the worker took it (ms since the epoch). */
  at: number;
}

/**
 * What a worker answers to one request: nothing (a silent worker), one reply, or several; or
 * `'nack'`: it hands the request back (NACK with requeue), as the original's workers do when their
 * handler throws.
 */
export type Script = (delivery: ScriptedDelivery) => ScriptedReply[] | 'nack';

export const reply = (output: unknown): ScriptedReply => ({ body: JSON.stringify(output) });
export const errorReply = (message: string, options: { retryable?: false } = {}): ScriptedReply => ({
  body: JSON.stringify({ error: message }),
  type: 'error',
  ...(options.retryable === false ? { headers: { 'x-retryable': false } } : {}),
});
/** An `abort` control reply: the whole job ends as aborted. */
export const abortReply = (reason: string): ScriptedReply => ({
  body: JSON.stringify({ reason }),
  type: 'abort',
});

export interface ScriptedWorkers {
  /** Every request the workers took, in order, across all queues. */
  deliveries: ScriptedDelivery[];
  /** Deliveries of the same request (correlation id and attempt) after its first: re-sends and redeliveries. */
  duplicates(): number;
  /** Attempts seen per correlation id, without repeats, in the order first seen. */
  attemptsByRequest(): Map<string, number[]>;
  stop(): Promise<void>;
}

/**
 * Workers on plain amqplib, as any client of protocol.md could be: each takes a request, sends what
 * its script says (possibly nothing, possibly an error reply, possibly two replies) to `reply_to`
 * with the same correlation id, then acknowledges.
 */
export async function startScriptedWorkers(
  scripts: Record<string, Script>,
  options: {
    prefetch?: number;
    connectionName?: string;
    delayMs?: number;
    /** Queues the test declared itself (with arguments): consumed as they are. */
    declared?: readonly string[];
  } = {},
): Promise<ScriptedWorkers> {
  const model: ChannelModel = await connect(AMQP_URL, {
    clientProperties: { connection_name: options.connectionName ?? 'switchyard-test-scripted-worker' },
  });
  model.on('error', () => {});
  const channel: Channel = await model.createChannel();
  channel.on('error', () => {});
  await channel.prefetch(options.prefetch ?? 50);
  const deliveries: ScriptedDelivery[] = [];
  for (const [queue, script] of Object.entries(scripts)) {
    if (!options.declared?.includes(queue)) await channel.assertQueue(queue, { durable: true });
    await channel.consume(queue, async (message) => {
      if (!message) return;
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      let input: Record<string, unknown> = {};
      try {
        input = JSON.parse(message.content.toString()) as Record<string, unknown>;
      } catch {
        // a request that is not JSON: the script sees {}
      }
      const delivery: ScriptedDelivery = {
        correlationId: String(message.properties.correlationId),
        attempt: Number(message.properties.headers?.['x-attempt'] ?? 0),
        token: String(message.properties.headers?.['x-switchyard-token'] ?? ''),
        redelivered: message.fields.redelivered,
        input,
        at: Date.now(),
      };
      deliveries.push(delivery);
      const answers = script(delivery);
      if (answers === 'nack') {
        channel.nack(message, false, true);
        return;
      }
      for (const answer of answers) {
        channel.sendToQueue(message.properties.replyTo as string, Buffer.from(answer.body), {
          correlationId: delivery.correlationId,
          contentType: 'application/json',
          headers: { 'x-attempt': delivery.attempt, ...answer.headers },
          ...(answer.type ? { type: answer.type } : {}),
        });
      }
      channel.ack(message);
    });
  }
  return {
    deliveries,
    duplicates: () => {
      const seen = new Set<string>();
      let duplicates = 0;
      for (const { correlationId, attempt } of deliveries) {
        const key = `${correlationId}#${attempt}`;
        if (seen.has(key)) duplicates++;
        else seen.add(key);
      }
      return duplicates;
    },
    attemptsByRequest: () => {
      const attempts = new Map<string, number[]>();
      for (const { correlationId, attempt } of deliveries) {
        const list = attempts.get(correlationId) ?? [];
        if (!list.includes(attempt)) list.push(attempt);
        attempts.set(correlationId, list);
      }
      return attempts;
    },
    stop: async () => {
      await model.close().catch(() => {});
    },
  };
}
