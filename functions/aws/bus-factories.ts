import type { BusFactory } from './container.js';
import type { BusKind } from './environment.js';

/**
 * The buses a handler can run with, each module imported on first use. The stack bundles every
 * function for its deployment's bus (infra/bundling.ts defines `process.env.SWITCHYARD_BUNDLED_BUS`):
 * the other bus's branch below is then dead code, and esbuild leaves its module out (amqplib and the
 * Secrets Manager client on SQS; the SQS bus adapter on RabbitMQ). Unbundled (tests, tsx) the variable
 * is unset and both buses are there.
 */
const sqs: BusFactory | undefined =
  process.env.SWITCHYARD_BUNDLED_BUS === 'rabbitmq'
    ? undefined
    : async (input) => (await import('./sqs-bus-factory.js')).sqsBusFactory(input);

const rabbitmq: BusFactory | undefined =
  process.env.SWITCHYARD_BUNDLED_BUS === 'sqs'
    ? undefined
    : async (input) => (await import('./rabbitmq-bus-factory.js')).rabbitMqBusFactory(input);

/** Every bus this bundle carries, by kind. */
export const BUNDLED_BUSES: Partial<Record<BusKind, BusFactory>> = {
  ...(sqs ? { sqs } : {}),
  ...(rabbitmq ? { rabbitmq } : {}),
};
