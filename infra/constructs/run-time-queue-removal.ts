import { CustomResource, Duration, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { RemoveQueuesProperties } from '../../functions/handlers/remove-queues.js';
import { STACK_TAG } from '../queue-names.js';
import type { SwitchyardSettings } from '../settings.js';
import { handlerProvider } from './custom-resource-provider.js';
import { HandlerFunction } from './handler-function.js';

export const QUEUE_REMOVAL_RESOURCE_TYPE = 'Custom::SwitchyardRunTimeQueues';

export interface RunTimeQueueRemovalProps {
  settings: SwitchyardSettings;
  /** Names of the queues the stack declares (CloudFormation deletes them itself). */
  declaredQueues: string[];
}

/**
 * Removes, on `cdk destroy`, the SQS step queues the functions created at run time for workflows
 * registered after the deploy (functions/handlers/remove-queues.ts): those under the stack's prefix
 * that carry its tag. The functions that create queues depend on it, so CloudFormation deletes it
 * after them: nothing creates a queue once it has run.
 */
export class RunTimeQueueRemoval extends Construct {
  readonly function: HandlerFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: RunTimeQueueRemovalProps) {
    super(scope, id);
    const { settings } = props;
    this.function = new HandlerFunction(scope, 'RemoveQueuesFunction', {
      handler: 'remove-queues',
      description:
        'Switchyard: removes the step queues created at run time when the stack is deleted (custom resource)',
      memorySize: 256,
      timeout: Duration.minutes(5),
      environment: {},
      settings,
    });
    const queues = Stack.of(this).formatArn({ service: 'sqs', resource: `${settings.queuePrefix}*` });
    this.function.allowUnscoped(
      'ListQueues',
      ['sqs:ListQueues'],
      'sqs:ListQueues has no resource-level permissions; the function lists only the names under the stack prefix (QueueNamePrefix).',
    );
    // Only queues tagged with this stack, as every grant under the prefix: another stack's queue that
    // matches the prefix is refused (the handler keeps a queue whose tags it may not read).
    this.function.allow('RemoveRunTimeQueues', ['sqs:ListQueueTags', 'sqs:DeleteQueue'], [queues], {
      StringEquals: { [`aws:ResourceTag/${STACK_TAG}`]: settings.stackName },
    });
    this.function.acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${settings.queuePrefix}*]`,
      `The queues created at run time are named ${settings.queuePrefix}<queue>: their ARNs are known only by that prefix, and deleting one needs the stack's tag on it.`,
    );

    const provider = handlerProvider(this, {
      handler: this.function,
      purpose: 'removes the queues created at run time',
      settings,
    });
    const properties: Omit<RemoveQueuesProperties, 'ServiceToken'> = {
      QueuePrefix: settings.queuePrefix,
      TagKey: STACK_TAG,
      TagValue: settings.stackName,
      DeclaredQueues: props.declaredQueues,
    };
    this.resource = new CustomResource(this, 'Queues', {
      serviceToken: provider.serviceToken,
      resourceType: QUEUE_REMOVAL_RESOURCE_TYPE,
      properties,
    });
  }
}
