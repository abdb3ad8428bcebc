import type { QueueNameRule } from '../../../engine/index.js';
import { SQS_MAX_QUEUE_NAME, SQS_QUEUE_CHARACTERS } from '../../transport/sqs/message.js';

/**
 * SQS's rule for step queue names: step queue `q` is the SQS queue `<prefix>q`, which takes only
 * letters, digits, `-` and `_`, at most 80 of them with the stack's prefix. The deployment hands it
 * to the manager, which checks every registered definition's queues (and namespace prefixes) with it.
 */
export function sqsQueueNameRule(prefix: string): QueueNameRule {
  return {
    queueProblem(queue) {
      const full = `${prefix}${queue}`;
      const start = `queue "${queue}" cannot be an SQS queue`;
      if (!SQS_QUEUE_CHARACTERS.test(queue)) return `${start}: SQS takes only letters, digits, "-" and "_"`;
      if (full.length > SQS_MAX_QUEUE_NAME) {
        return `${start}: "${full}" has ${full.length} characters; SQS takes at most ${SQS_MAX_QUEUE_NAME}, the stack's prefix "${prefix}" included`;
      }
      return undefined;
    },
    prefixProblem(queuePrefix) {
      return SQS_QUEUE_CHARACTERS.test(queuePrefix)
        ? undefined
        : `queue prefix "${queuePrefix}" cannot be part of an SQS queue name: SQS takes only letters, digits, "-" and "_"`;
    },
  };
}
