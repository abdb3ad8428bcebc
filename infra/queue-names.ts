import { DEFAULT_REPLY_QUEUE } from '../engine/index.js';
/** The reply queue's name, under the prefix on SQS and as is on RabbitMQ (the protocol's default). */
export const REPLY_QUEUE = DEFAULT_REPLY_QUEUE;

/** The tag every queue of the stack carries, with the stack's name: IAM lets the functions use only those. */
export const STACK_TAG = 'switchyard:stack';

/** The stack's own queues; a workflow step may not use one of these names. */
export const MANAGER_QUEUES = {
  reply: REPLY_QUEUE,
  replyDeadLetters: `${REPLY_QUEUE}-dlq`,
  stepDeadLetters: 'switchyard-steps-dlq',
  timers: 'switchyard-timers',
  timerDeadLetters: 'switchyard-timers-dlq',
  /** The timers function's asynchronous invocations (schedule ticks, sweeps) that failed every try. */
  timerFailures: 'switchyard-timers-failed',
  /** Batches of the table stream the job-events function gave up on (`-c jobEvents`). */
  jobEventFailures: 'switchyard-job-events-failed',
} as const;

const SQS_QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** `<prefix><name>`, checked against SQS's rules so that a bad name stops the synth, not the deploy. */
export function sqsQueueName(prefix: string, name: string): string {
  const full = `${prefix}${name}`;
  if (!SQS_QUEUE_NAME.test(full)) {
    throw new Error(
      `queue "${name}" cannot be an SQS queue: "${full}" must be 1 to 80 letters, digits, "-" or "_" ` +
        '(rename the step queue, or shorten -c queuePrefix)',
    );
  }
  return full;
}

/** Fails when a step queue would be one of the manager's own queues. */
export function checkStepQueueNames(stepQueues: readonly string[]): void {
  const reserved = new Set<string>(Object.values(MANAGER_QUEUES));
  const clashes = stepQueues.filter((queue) => reserved.has(queue));
  if (clashes.length > 0) {
    throw new Error(
      `step queue ${clashes.map((queue) => `"${queue}"`).join(', ')} is reserved for the manager's own queues`,
    );
  }
}
