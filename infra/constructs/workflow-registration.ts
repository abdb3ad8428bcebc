import { CustomResource } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { WorkflowDefinition } from '../../engine/index.js';
import type { SwitchyardSettings } from '../settings.js';
import { handlerProvider } from './custom-resource-provider.js';
import type { HandlerFunction } from './handler-function.js';

export const REGISTRATION_RESOURCE_TYPE = 'Custom::SwitchyardWorkflows';

export interface WorkflowRegistrationProps {
  /** The register-workflows function (the provider's onEvent handler). */
  handler: HandlerFunction;
  definitions: readonly WorkflowDefinition[];
  /** The namespace the definitions are registered in (the file's `namespace:`); absent: `default`. */
  namespace?: string;
  /** The file's `queuePrefix:`, already in the definitions' queues; it becomes the namespace's setting. */
  queuePrefix?: string;
  settings: SwitchyardSettings;
}

/**
 * Registers the `-c workflows` definitions in the store at every deploy that changes them: a custom
 * resource whose `Definitions` property is the definitions as JSON (a change is an Update event).
 */
export class WorkflowRegistration extends Construct {
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: WorkflowRegistrationProps) {
    super(scope, id);
    const provider = handlerProvider(this, {
      handler: props.handler,
      purpose: 'registers the workflows',
      settings: props.settings,
    });

    this.resource = new CustomResource(this, 'Workflows', {
      serviceToken: provider.serviceToken,
      resourceType: REGISTRATION_RESOURCE_TYPE,
      properties: {
        Definitions: JSON.stringify(props.definitions),
        ...(props.namespace ? { Namespace: props.namespace } : {}),
        ...(props.queuePrefix ? { QueuePrefix: props.queuePrefix } : {}),
      },
    });
  }
}
