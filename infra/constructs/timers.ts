import { Duration } from 'aws-cdk-lib';
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
 */
export class TimerQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

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
  }
}
