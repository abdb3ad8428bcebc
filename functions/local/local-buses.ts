import type { Bus, DeadLetterIntake, ReplyIntake } from '../../engine/index.js';
import { MemoryBroker, MemoryBus } from '../adapters/memory/bus.js';
import { RabbitMqBus } from '../adapters/rabbitmq/bus.js';
import type { Logger } from '../telemetry/telemetry.js';
import { DEFAULT_AMQP_URL, redactUrl } from '../transport/amqp/url.js';

/** How long a request may stay in RabbitMQ unless `--request-ttl` says otherwise. */
export const DEFAULT_REQUEST_TTL_MS = 60 * 60_000;

export function amqpUrlFromEnv(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit ?? env.AMQP_URL ?? env.AMQP_SERVER ?? DEFAULT_AMQP_URL;
}

/** The settings of serve a bus may read (`ServeOptions` has them all). */
export interface LocalBusSettings {
  amqpUrl?: string;
  replyQueue?: string;
  connectionName?: string;
  requestTtlMs?: number;
  quorumQueues?: boolean;
  maxDeliveries?: number;
}

/** What serve runs on: the bus, which is also its reply intake, and what serve says of it. */
export interface LocalBus {
  bus: Bus & ReplyIntake & Partial<DeadLetterIntake>;
  /** For the "serving" log line: where it is (a URL's password redacted). */
  description: string;
  /** The bus lets requests expire after this long, and the manager sends them again while awaited. */
  requestTtlMs?: number;
  /** With the in-process bus: the broker in-process workers connect to. */
  broker?: MemoryBroker;
}

export type LocalBusFactory = (settings: LocalBusSettings, logger: Logger) => LocalBus;

/** The buses `serve --bus` runs on: a new bus is its adapter folder and a line here (docs/architecture.md). */
export const LOCAL_BUSES = {
  rabbitmq: (settings, logger) => {
    const url = amqpUrlFromEnv(settings.amqpUrl);
    const requestTtlMs = settings.requestTtlMs ?? DEFAULT_REQUEST_TTL_MS;
    const bus = new RabbitMqBus({
      url,
      logger,
      replyQueue: settings.replyQueue,
      connectionName: settings.connectionName,
      requestTtlMs,
      quorumQueues: settings.quorumQueues,
      maxDeliveries: settings.maxDeliveries,
    });
    return { bus, description: redactUrl(url), requestTtlMs };
  },
  memory: (settings) => {
    const broker = new MemoryBroker();
    return { bus: new MemoryBus(broker, settings.replyQueue), description: 'memory', broker };
  },
} satisfies Record<string, LocalBusFactory>;

export type LocalBusKind = keyof typeof LOCAL_BUSES;
