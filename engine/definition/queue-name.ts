import { DEFAULT_REPLY_QUEUE } from '../ports/bus.js';
import type { StepDefinition } from './types.js';

/** The longest queue or vhost name AMQP 0-9-1 carries (a short string), in bytes of UTF-8. */
export const MAX_AMQP_NAME_BYTES = 255;

/** Vhosts one workflow may run on: each costs the local server two connections (requests, replies). */
export const MAX_VHOSTS = 16;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `name` (a queue or vhost) is not a name RabbitMQ takes, or undefined. */
export function amqpNameProblem(what: 'queue' | 'vhost', name: string): string | undefined {
  if (name.trim() === '') return `"${what}" must be a ${what} name, got a blank one`;
  if (CONTROL.test(name)) return `${what} ${JSON.stringify(name)} holds a control character`;
  const bytes = Buffer.byteLength(name);
  if (bytes > MAX_AMQP_NAME_BYTES) {
    return `${what} "${shorten(name)}" has ${bytes} bytes in UTF-8; RabbitMQ takes at most ${MAX_AMQP_NAME_BYTES}`;
  }
  return undefined;
}

/**
 * What a bus adds to RabbitMQ's rules for step queue names (deployed on SQS: its characters and
 * length, the stack's prefix included); the manager checks every registered definition with it.
 */
export interface QueueNameRule {
  /** Why `queue` (as sent to: a namespace's prefix included) cannot be this bus's queue, or undefined. */
  queueProblem(queue: string): string | undefined;
  /** Why `prefix` cannot start this bus's queue names, or undefined. */
  prefixProblem(prefix: string): string | undefined;
}

/** Why `queue` cannot be a step's queue, or undefined. */
export function stepQueueProblem(queue: string, replyQueue = DEFAULT_REPLY_QUEUE): string | undefined {
  return amqpNameProblem('queue', queue) ?? reservedQueueProblem(queue, replyQueue);
}

/**
 * The queues that are the manager's own, whatever its reply queue is called: RabbitMQ's `amq.`
 * queues, the original's reply queue `workflow-manager` and everything named after it
 * (`workflow-manager.dead-letters`), and everything of `switchyard.` or `switchyard-` (the
 * dead-letter exchange's queues, the deployed timer and dead-letter queues).
 */
const MANAGER_QUEUE_PREFIXES = ['amq.', DEFAULT_REPLY_QUEUE, 'switchyard.', 'switchyard-'] as const;

/** Why `queue` is one of the manager's own queues (the configured reply queue's too), or undefined. */
export function reservedQueueProblem(queue: string, replyQueue = DEFAULT_REPLY_QUEUE): string | undefined {
  if (queue.startsWith('amq.')) {
    return `queue "${queue}" starts with "amq.", which RabbitMQ reserves for its own queues`;
  }
  if (queue === replyQueue) {
    return `queue "${queue}" is the manager's reply queue: a request sent there would come back as its own reply`;
  }
  for (const prefix of [...MANAGER_QUEUE_PREFIXES, replyQueue]) {
    if (queue.startsWith(prefix)) {
      return `queue "${queue}" is named like the manager's own queues ("${prefix}…"): a request sent there would reach the manager, not a worker`;
    }
  }
  return undefined;
}

function shorten(name: string): string {
  const characters = [...name];
  return characters.length > 20 ? `${characters.slice(0, 20).join('')}…` : name;
}

/** The queue a step sends its requests to, or undefined for a step that sends none. */
export function sentQueueOf(step: StepDefinition): string | undefined {
  if (step.type === 'signal' || step.task !== undefined || step.workflow !== undefined) return undefined;
  return step.queue ?? step.name;
}
