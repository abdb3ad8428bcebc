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
