import type { Context } from 'aws-lambda';
import { type AmazonMqRabbitEvent, amazonMqReplies } from '../aws/amazon-mq-event.js';
import { drainOutbox } from '../aws/drain-outbox.js';
import { fromEnvironment } from '../aws/from-env.js';
import { invocation } from '../aws/invocation.js';
import type { LambdaTelemetry } from '../aws/lambda-telemetry.js';
import { rabbitMqBusFactory } from '../aws/rabbitmq-bus-factory.js';
import type { Manager } from '../manager/manager.js';

export interface RepliesMqDeps {
  manager: Manager;
  telemetry: LambdaTelemetry;
}

export type RepliesMqHandler = (event: AmazonMqRabbitEvent, context?: Context) => Promise<void>;

/**
 * Workers' replies from the reply queue on Amazon MQ for RabbitMQ. The event source mapping has no
 * partial batch response: an error sends the whole batch back. So the handler throws only when the
 * batch must come back (the store could not take it); handling a reply again changes nothing, and a
 * malformed reply is logged, counted and dropped by the manager.
 */
export function createRepliesMqHandler(deps: RepliesMqDeps): RepliesMqHandler {
  const { manager, telemetry } = deps;
  return (event, context) =>
    invocation(telemetry, context, async () => {
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
      await drainOutbox(manager, telemetry.logger, context);
    });
}

const fromEnv = fromEnvironment({ rabbitmq: rabbitMqBusFactory }, createRepliesMqHandler);

export const handler: RepliesMqHandler = async (event, context) => (await fromEnv())(event, context);
