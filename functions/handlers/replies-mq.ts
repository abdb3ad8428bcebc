import type { Context } from 'aws-lambda';
import { type AmazonMqRabbitEvent, amazonMqReplies } from '../aws/amazon-mq-event.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import { rabbitMqBusFactory } from '../aws/rabbitmq-bus-factory.js';

export type RepliesMqHandler = (event: AmazonMqRabbitEvent, context?: Context) => Promise<void>;

/**
 * Workers' replies from the reply queue on Amazon MQ for RabbitMQ. The event source mapping has no
 * partial batch response: an error sends the whole batch back. So the handler throws only when the
 * batch must come back (the store could not take it); handling a reply again changes nothing. A
 * malformed reply is logged, counted and dropped by the manager, and a poison reply (one the store
 * cannot take) is isolated and recorded as a failed attempt: neither sends the batch back.
 */
export function createRepliesMqHandler(deps: ManagerHandlerDeps): RepliesMqHandler {
  const { manager, telemetry } = deps;
  return (event, context) =>
    drainingInvocation(deps, context, async () => {
      const replies = amazonMqReplies(event);
      try {
        await manager.handleReplies(replies);
      } catch (error) {
        telemetry.logger.error('reply batch failed; the broker delivers it again', {
          error,
          size: replies.length,
        });
        throw error;
      }
    });
}

const fromEnv = fromEnvironment({ rabbitmq: rabbitMqBusFactory }, createRepliesMqHandler);

export const handler: RepliesMqHandler = async (event, context) => (await fromEnv())(event, context);
