import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MANAGER_QUEUES, sqsQueueName } from '../queue-names.js';
import { eventSourceVisibility, REPLY_MAX_RECEIVE_COUNT, SECURE_QUEUE } from './sqs-bus.js';

export interface TimerQueueProps {
  queuePrefix: string;
  /** Timeout of the timers function (the queue's visibility timeout follows from it). */
  timersTimeout: Duration;
}

/**
 * Deadlines as delayed SQS messages (up to 15 minutes each; the timers function re-arms longer ones),
 * used with either bus. A scheduled sweep every minute catches anything a lost message would miss.
 * The timers function's asynchronous invocations (workflow schedule ticks, the sweep) that fail every
 * try Lambda gives them land in `failures` (its on-failure destination), which an alarm watches.
 */
export class TimerQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly failures: sqs.Queue;

  constructor(scope: Construct, id: string, props: TimerQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      ...SECURE_QUEUE,
      queueName: sqsQueueName(props.queuePrefix, MANAGER_QUEUES.timerDeadLetters),
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      ...SECURE_QUEUE,
      queueName: sqsQueueName(props.queuePrefix, MANAGER_QUEUES.timers),
      visibilityTimeout: eventSourceVisibility(props.timersTimeout),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: REPLY_MAX_RECEIVE_COUNT },
    });
    this.failures = new sqs.Queue(this, 'Failures', {
      ...SECURE_QUEUE,
      queueName: sqsQueueName(props.queuePrefix, MANAGER_QUEUES.timerFailures),
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "The timers function's on-failure destination: a dead-letter queue of asynchronous invocations (Lambda's, not SQS's redrive), read by a person after its alarm.",
    });
  }
}
