import { sqsQueueNameRule } from '../adapters/sqs/queue-names.js';
import type { QueueRules } from '../manager/queue-rules.js';
import type { HandlerEnvironment } from './environment.js';

/** The queue rules of the deployment the handler runs in. */
export function queueRulesOf(env: HandlerEnvironment): QueueRules {
  return {
    replyQueue: env.replyQueue,
    ...(env.bus.kind === 'sqs' ? { queueNames: sqsQueueNameRule(env.bus.queuePrefix) } : {}),
  };
}
