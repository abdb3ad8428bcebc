import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SendOptions, StepRequest } from '../../../engine/index.js';
import { TOKEN_ATTRIBUTE } from '../../transport/request-token.js';
import { numberAttribute, stringAttribute } from '../../transport/sqs/message.js';

/**
 * Where each field of a request travels in its SQS message (protocol.md, "SQS"), or null where it
 * does not: a field added to StepRequest fails tsc here until it is placed. The bus contract
 * (test/functions/bus-contract.ts) reads every placed field back from the message a worker receives.
 */
export const REQUEST_IN_SQS = {
  jobId: 'attribute correlation_id, before the colon',
  step: 'attribute correlation_id, after the colon',
  queue: 'the queue it is sent to, `<prefix><queue>`',
  // SQS has no vhosts: a step's vhost plays no part in its queue's name.
  vhost: null,
  correlationId: 'attribute correlation_id',
  attempt: 'attribute attempt (Number)',
  body: 'the body, as JSON',
  // A message cannot expire before its queue's retention period: a request past its deadline is
  // still delivered, and the worker's reply to an attempt that ended is ignored (protocol.md).
  deadline: null,
  // Resolved into the body before the bus is given the request (functions/manager/secret-bus.ts).
  secrets: null,
} as const satisfies Record<keyof StepRequest, string | null>;

/**
 * A request's SQS message: its body and attributes (`replyQueueUrl` is its `reply_to`; `tokenOf`,
 * when replies are authenticated, gives the token it carries to its worker).
 */
export function requestMessage(
  request: StepRequest,
  replyQueueUrl: string,
  tokenOf?: SendOptions['tokenOf'],
): { body: string; attributes: Record<string, MessageAttributeValue> } {
  return {
    body: JSON.stringify(request.body),
    attributes: {
      correlation_id: stringAttribute(request.correlationId),
      reply_to: stringAttribute(replyQueueUrl),
      attempt: numberAttribute(request.attempt),
      ...(tokenOf ? { [TOKEN_ATTRIBUTE]: stringAttribute(tokenOf(request)) } : {}),
    },
  };
}
