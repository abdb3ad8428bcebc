import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { connect } from 'amqplib';
import type { Bus } from '../../engine/index.js';
import { RabbitMqBus } from '../adapters/rabbitmq/bus.js';
import { replyQueuesOf } from '../transport/amqp/reply-shards.js';
import { readBrokerUrl } from './broker-url.js';
import type { BusFactory } from './container.js';
import { declareReplyQueues } from './mq-reply-queues.js';
import { sdkClientConfig } from './sdk-clients.js';

/** The broker URL each bus was built with: the replies handler parks over a connection of its own. */
const brokerUrls = new WeakMap<Bus, string>();

export function brokerUrlOf(bus: Bus): string | undefined {
  return brokerUrls.get(bus);
}

/**
 * The RabbitMQ bus on Amazon MQ, over AMQPS, logging in with the broker secret's user and password
 * (read from Secrets Manager once per container, never logged: the bus redacts its URL).
 */
export const rabbitMqBusFactory: BusFactory = async (input): Promise<Bus> => {
  const { env, telemetry } = input;
  const { bus } = env;
  if (bus.kind !== 'rabbitmq') throw new Error(`the RabbitMQ bus cannot be built for BUS=${bus.kind}`);
  const secretsManager = input.secretsManager ?? new SecretsManagerClient(sdkClientConfig());
  const url = await readBrokerUrl(
    input.captureClient ? input.captureClient(secretsManager) : secretsManager,
    bus.secretArn,
    bus.amqpsEndpoint,
  );
  const rabbit = new RabbitMqBus({
    url,
    replyQueue: env.replyQueue,
    replyShards: bus.replyShards,
    logger: telemetry.logger,
    connectionName: 'switchyard-lambda',
  });
  brokerUrls.set(rabbit, url);
  // The event source mappings consume the reply queues but never declare them, and a reply published to
  // a queue that does not exist is dropped: declare it before this container sends any request. It is
  // a quorum queue with a delivery limit and the parked queue as its dead-letter target
  // (mq-reply-queues.ts), declared first so that the bus's own plain declaration finds it there.
  try {
    const model = await connect(url, { clientProperties: { connection_name: 'switchyard-lambda:declare' } });
    model.on('error', () => {});
    try {
      for (const queue of replyQueuesOf(env.replyQueue, bus.replyShards))
        await declareReplyQueues(model, queue, telemetry.logger, env.replyQueue);
    } finally {
      await model.close().catch(() => {});
    }
    await rabbit.ensureQueues([{ queue: env.replyQueue, vhost: null }]);
  } catch (error) {
    telemetry.logger.warn('could not declare the reply queue yet', { queue: env.replyQueue, error });
  }
  return rabbit;
};
