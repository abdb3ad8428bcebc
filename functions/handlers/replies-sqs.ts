import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseSqsReply } from '../adapters/sqs/reply.js';
import { drainOutbox } from '../aws/drain-outbox.js';
import { fromEnvironment } from '../aws/from-env.js';
import { invocation } from '../aws/invocation.js';
import type { LambdaTelemetry } from '../aws/lambda-telemetry.js';
import { settleSqsBatch } from '../aws/sqs-batch.js';
import { sqsBusFactory } from '../aws/sqs-bus-factory.js';
import type { Manager } from '../manager/manager.js';

export interface RepliesSqsDeps {
  manager: Manager;
  telemetry: LambdaTelemetry;
}

export type RepliesSqsHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/**
 * Workers' replies from the SQS reply queue, a batch at a time in one manager call. A reply that
 * names no job (malformed) is logged, counted and dropped by the manager: not a failure. A failure
 * to store (throttling beyond the retries, an outage) is: only the messages that fail come back.
 */
export function createRepliesSqsHandler(deps: RepliesSqsDeps): RepliesSqsHandler {
  const { manager, telemetry } = deps;
  return (event, context) =>
    invocation(telemetry, context, async () => {
      const response = await settleSqsBatch(
        event.Records,
        {
          all: (records) => manager.handleReplies(records.map(parseSqsReply)),
          one: (record) => manager.handleReplies([parseSqsReply(record)]),
        },
        telemetry.logger,
      );
      await drainOutbox(manager, telemetry.logger, context);
      return response;
    });
}

const fromEnv = fromEnvironment({ sqs: sqsBusFactory }, createRepliesSqsHandler);

export const handler: RepliesSqsHandler = async (event, context) => (await fromEnv())(event, context);
