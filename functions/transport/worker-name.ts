import { hostname } from 'node:os';

/**
 * The AMQP header (RabbitMQ, Amazon MQ) and SQS message attribute in which a worker names itself on
 * its replies (protocol.md): the job's history shows it beside each attempt. On AMQP, a reply without
 * it is named by its `app_id` property, when it has one.
 */
export const WORKER_HEADER = 'x-worker';

/** What the SDK's workers call themselves unless told otherwise: their host and process id. */
export function defaultWorkerName(): string {
  return `${hostname()}:${process.pid}`;
}

/** The `x-worker` header's text (a string, or bytes as UTF-8); undefined when empty or of another type. */
export function readWorkerHeader(value: unknown): string | undefined {
  const text =
    typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  return text === undefined || text.trim() === '' ? undefined : text;
}
