import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MANAGER_QUEUES, sqsQueueName } from '../queue-names.js';

/** Deliveries of a request before SQS moves it to the step dead-letter queue (a failed attempt). */
export const STEP_MAX_RECEIVE_COUNT = 5;
/** Replies are retried more: their failures are the manager's own (throttling, lost races), mostly passing. */
export const REPLY_MAX_RECEIVE_COUNT = 10;
/** Lambda wants a queue's visibility timeout at least six times the timeout of the function it triggers. */
export const EVENT_SOURCE_VISIBILITY_FACTOR = 6;

/** The visibility timeout of a queue that triggers a function with `functionTimeout`. */
export function eventSourceVisibility(functionTimeout: Duration): Duration {
  return Duration.seconds(functionTimeout.toSeconds() * EVENT_SOURCE_VISIBILITY_FACTOR);
}

export interface SqsBusProps {
  queuePrefix: string;
  /** Queue names without the prefix, one SQS queue each. */
  stepQueues: readonly string[];
  stepVisibilityTimeout: Duration;
  /** Timeout of the replies function (the reply queue's visibility timeout follows from it). */
  repliesTimeout: Duration;
  /** Timeout of the dead-letters function (the step DLQ's visibility timeout follows from it). */
  deadLettersTimeout: Duration;
}

/** SQS's largest message, which the manager counts on (MAX_MESSAGE_BYTES); a new queue defaults to it, an old one not. */
export const MAX_SQS_MESSAGE_BYTES = 1024 * 1024;

/** Settings every queue of the stack shares: encrypted at rest (SSE-SQS), TLS only, 1 MiB messages. */
export const SECURE_QUEUE = {
  encryption: sqs.QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
  maxMessageSizeBytes: MAX_SQS_MESSAGE_BYTES,
} as const;

/**
 * The SQS bus: the reply queue with its own dead-letter queue, and one queue per step queue, all
 * sharing one dead-letter queue that the dead-letters function reads.
 */
export class SqsBus extends Construct {
  readonly replyQueue: sqs.Queue;
  readonly replyDeadLetterQueue: sqs.Queue;
  readonly stepDeadLetterQueue: sqs.Queue;
  /** By queue name without the prefix. */
  readonly stepQueues: ReadonlyMap<string, sqs.Queue>;

  constructor(scope: Construct, id: string, props: SqsBusProps) {
    super(scope, id);
    const name = (queue: string): string => sqsQueueName(props.queuePrefix, queue);
    const retainLongest = Duration.days(14);

    this.replyDeadLetterQueue = new sqs.Queue(this, 'ReplyDeadLetters', {
      ...SECURE_QUEUE,
      queueName: name(MANAGER_QUEUES.replyDeadLetters),
      retentionPeriod: retainLongest,
    });
    this.replyQueue = new sqs.Queue(this, 'Replies', {
      ...SECURE_QUEUE,
      queueName: name(MANAGER_QUEUES.reply),
      visibilityTimeout: eventSourceVisibility(props.repliesTimeout),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.replyDeadLetterQueue, maxReceiveCount: REPLY_MAX_RECEIVE_COUNT },
    });

    // A message keeps its first enqueue time when it moves to a DLQ, so the DLQ keeps messages longer.
    this.stepDeadLetterQueue = new sqs.Queue(this, 'StepDeadLetters', {
      ...SECURE_QUEUE,
      queueName: name(MANAGER_QUEUES.stepDeadLetters),
      retentionPeriod: retainLongest,
      visibilityTimeout: eventSourceVisibility(props.deadLettersTimeout),
    });
    if (props.stepQueues.length === 0) {
      Validations.of(this.stepDeadLetterQueue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          'No step queues are deployed with this stack: this is the dead-letter queue of the ones the API function creates when a workflow is registered (STEP_QUEUE_DLQ_ARN).',
      });
    }
    const stepQueues = new Map<string, sqs.Queue>();
    for (const queue of props.stepQueues) {
      stepQueues.set(
        queue,
        new sqs.Queue(this, `Step-${queue}`, {
          ...SECURE_QUEUE,
          queueName: name(queue),
          visibilityTimeout: props.stepVisibilityTimeout,
          retentionPeriod: Duration.days(4),
          deadLetterQueue: { queue: this.stepDeadLetterQueue, maxReceiveCount: STEP_MAX_RECEIVE_COUNT },
        }),
      );
    }
    this.stepQueues = stepQueues;
  }
}
