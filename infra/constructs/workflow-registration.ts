import { CustomResource, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { WorkflowDefinition } from '../../engine/definition/types.js';
import type { SwitchyardSettings } from '../settings.js';
import { type HandlerFunction, NODE_RUNTIME_REASON } from './handler-function.js';

export const REGISTRATION_RESOURCE_TYPE = 'Custom::SwitchyardWorkflows';

export interface WorkflowRegistrationProps {
  /** The register-workflows function (the provider's onEvent handler). */
  handler: HandlerFunction;
  definitions: readonly WorkflowDefinition[];
  /** The namespace the definitions are registered in (the file's `namespace:`); absent: `default`. */
  namespace?: string;
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
    const { settings } = props;
    const logGroup = new logs.LogGroup(this, 'ProviderLogs', {
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const frameworkRole = new iam.Role(this, 'ProviderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Custom resource provider that registers the workflows of ${settings.stackName}`,
      inlinePolicies: {
        WriteOwnLogs: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
              resources: [logGroup.logGroupArn],
            }),
          ],
        }),
      },
    });
    const provider = new cr.Provider(this, 'Provider', {
      onEventHandler: props.handler.function,
      frameworkOnEventRole: frameworkRole,
      logGroup,
    });
    this.pinFrameworkRuntime(provider);
    Validations.of(frameworkRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(props.handler.function.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason:
        'The CDK provider framework may invoke any version of the register-workflows function (grantInvoke adds the function ARN with :*); it is still that one function.',
    });

    this.resource = new CustomResource(this, 'Workflows', {
      serviceToken: provider.serviceToken,
      resourceType: REGISTRATION_RESOURCE_TYPE,
      properties: {
        Definitions: JSON.stringify(props.definitions),
        ...(props.namespace ? { Namespace: props.namespace } : {}),
      },
    });
  }

  /**
   * The framework's own function is plain JavaScript with no native code: run it like ours, on
   * Node.js 24 and arm64, rather than on whatever runtime and architecture CDK picks.
   */
  private pinFrameworkRuntime(provider: cr.Provider): void {
    for (const child of provider.node.findAll()) {
      if (child instanceof lambda.CfnFunction) {
        child.runtime = lambda.Runtime.NODEJS_24_X.name;
        child.architectures = [lambda.Architecture.ARM_64.name];
        Validations.of(child).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_REASON });
      }
    }
  }
}
