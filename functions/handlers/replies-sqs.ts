import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseSqsReply } from '../adapters/sqs/reply.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import { settleSqsBatch } from '../aws/sqs-batch.js';
import { sqsBusFactory } from '../aws/sqs-bus-factory.js';

export type RepliesSqsHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/**
 * Workers' replies from the SQS reply queue, a batch at a time in one manager call. A reply that
 * names no job (malformed) is logged, counted and dropped by the manager: not a failure; nor is a
 * poison reply, which the manager isolates and records as a failed attempt. A failure to store
 * (throttling beyond the retries, an outage) is: only the messages that fail come back.
 */
export function createRepliesSqsHandler(deps: ManagerHandlerDeps): RepliesSqsHandler {
  const { manager, telemetry } = deps;
  return (event, context) =>
    drainingInvocation(deps, context, () =>
      settleSqsBatch(
        event.Records,
        {
          all: (records) => manager.handleReplies(records.map(parseSqsReply)),
          one: (record) => manager.handleReplies([parseSqsReply(record)]),
        },
        telemetry.logger,
      ),
    );
}

const fromEnv = fromEnvironment({ sqs: sqsBusFactory }, createRepliesSqsHandler);

export const handler: RepliesSqsHandler = async (event, context) => (await fromEnv())(event, context);
