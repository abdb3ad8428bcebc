import type { Bus } from '../../engine/ports/bus.js';
import { SqsBus } from '../adapters/sqs/bus.js';
import type { BusFactory } from './container.js';

/** Deliveries of a request before SQS moves it to the step DLQ: the stack's STEP_MAX_RECEIVE_COUNT. */
const STEP_MAX_RECEIVE_COUNT = 5;
/** Step queues keep requests as long as the stack's own step queues do (4 days). */
const STEP_QUEUE_RETENTION_SECONDS = 4 * 24 * 60 * 60;

/**
 * The SQS bus. Step queues of workflows registered after the deploy are created with the settings of
 * the stack's own step queues (infra/constructs/sqs-bus.ts).
 */
export const sqsBusFactory: BusFactory = async ({ env, sqs }): Promise<Bus> => {
  const { bus } = env;
  if (bus.kind !== 'sqs') throw new Error(`the SQS bus cannot be built for BUS=${bus.kind}`);
  return new SqsBus({
    client: sqs,
    queuePrefix: bus.queuePrefix,
    replyQueueUrl: bus.replyQueueUrl,
    createMissingQueues: {
      visibilityTimeoutSeconds: bus.stepQueueVisibilityTimeoutSeconds,
      messageRetentionSeconds: STEP_QUEUE_RETENTION_SECONDS,
      deadLetter: { targetArn: bus.stepQueueDeadLetterArn, maxReceiveCount: STEP_MAX_RECEIVE_COUNT },
      encryption: { kind: 'sqs-managed' },
      // The step dead-letter queue's ARN gives the region and account every queue's ARN starts with.
      tlsOnly: { queueArnPrefix: bus.stepQueueDeadLetterArn.replace(/[^:]+$/, '') },
    },
  });
};
