import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Bus } from '../../engine/index.js';
import { SqsBus } from '../adapters/sqs/bus.js';
import type { BusFactory } from './container.js';

/** Deliveries of a request before SQS moves it to the step DLQ: the stack's STEP_MAX_RECEIVE_COUNT. */
const STEP_MAX_RECEIVE_COUNT = 5;
/** Step queues keep requests as long as the stack's own step queues do (4 days). */
const STEP_QUEUE_RETENTION_SECONDS = 4 * 24 * 60 * 60;
/** SQS's largest message, which the manager counts on, as the stack's own queues set it. */
export const MAX_SQS_MESSAGE_BYTES = 1024 * 1024;

/**
 * The SQS bus. Step queues of workflows registered after the deploy are created with the settings of
 * the stack's own step queues (infra/constructs/sqs-bus.ts).
 */
export const sqsBusFactory: BusFactory = async ({ env, sqs }): Promise<Bus> => {
  const { bus } = env;
  if (bus.kind !== 'sqs') throw new Error(`the SQS bus cannot be built for BUS=${bus.kind}`);
  createQueuesLikeTheStack(sqs, bus.queueTags);
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

const prepared = new WeakSet<SQSClient>();

/**
 * Every CreateQueue through `client` gets the stack's tags (IAM lets the functions create and use
 * only queues tagged so) and SQS's largest message size, as the stack's own queues: the bus adapter
 * sets the other attributes. A middleware, so that the adapter stays unaware of either.
 */
export function createQueuesLikeTheStack(client: SQSClient, tags: Record<string, string>): void {
  if (prepared.has(client)) return;
  prepared.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'CreateQueueCommand') {
        const input = args.input as { tags?: Record<string, string>; Attributes?: Record<string, string> };
        if (Object.keys(tags).length > 0) input.tags = { ...tags, ...input.tags };
        input.Attributes = { MaximumMessageSize: String(MAX_SQS_MESSAGE_BYTES), ...input.Attributes };
      }
      return next(args);
    },
    { step: 'initialize', name: 'switchyardQueueSettings' },
  );
}
