import { SQSClient } from '@aws-sdk/client-sqs';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createLambdaTelemetry } from '../aws/lambda-telemetry.js';
import { removeRunTimeQueues } from '../aws/run-time-queues.js';
import { sdkClientConfig } from '../aws/sdk-clients.js';
import type { Logger } from '../telemetry/telemetry.js';

/** The custom resource's properties (infra/constructs/run-time-queue-removal.ts). */
export interface RemoveQueuesProperties {
  ServiceToken: string;
  QueuePrefix: string;
  TagKey: string;
  TagValue: string;
  /** Names of the queues the stack declares, which CloudFormation deletes itself. */
  DeclaredQueues: string[];
}

export type RemoveQueuesEvent = CloudFormationCustomResourceEvent<RemoveQueuesProperties>;

export interface RemoveQueuesResponse {
  PhysicalResourceId: string;
  Data?: { Removed: string };
}

export type RemoveQueuesHandler = (event: RemoveQueuesEvent) => Promise<RemoveQueuesResponse>;

/**
 * The custom resource that removes, when the stack is deleted, the step queues its functions created
 * for workflows registered after the deploy: CloudFormation does not know them. Create and Update do
 * nothing. Its physical id is the prefix: a new prefix replaces the resource, and the old one's Delete
 * removes the queues under the old prefix.
 */
export function createRemoveQueuesHandler(deps: { sqs: SQSClient; logger: Logger }): RemoveQueuesHandler {
  return async (event) => {
    const properties = event.ResourceProperties;
    const physicalResourceId = `run-time-queues:${properties.QueuePrefix}`;
    if (event.RequestType !== 'Delete') return { PhysicalResourceId: physicalResourceId };
    const { removed, kept } = await removeRunTimeQueues(deps.sqs, {
      prefix: properties.QueuePrefix,
      tag: { key: properties.TagKey, value: properties.TagValue },
      declared: properties.DeclaredQueues ?? [],
    });
    deps.logger.info('run-time queues removed', { removed: removed.join(','), kept: kept.length });
    return { PhysicalResourceId: event.PhysicalResourceId, Data: { Removed: String(removed.length) } };
  };
}

let built: RemoveQueuesHandler | undefined;

export const handler: RemoveQueuesHandler = (event) => {
  built ??= createRemoveQueuesHandler({
    sqs: new SQSClient(sdkClientConfig()),
    logger: createLambdaTelemetry({ logLevel: 'info' }).logger,
  });
  return built(event);
};
