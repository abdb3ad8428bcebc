import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';
import { type HandlerFunction, NODE_RUNTIME_REASON } from './handler-function.js';

export interface HandlerProviderProps {
  /** The provider's onEvent handler. */
  handler: HandlerFunction;
  /** What the custom resource does, for the framework role's description. */
  purpose: string;
  settings: SwitchyardSettings;
}

/**
 * The CDK provider framework in front of one of our handlers, created in `scope` (as `ProviderLogs`,
 * `ProviderRole` and `Provider`: a custom resource's service token must never change, so neither may
 * these ids). The framework answers CloudFormation, with a role that writes only to its own log group,
 * on Node.js 24 and arm64 like our functions.
 */
export function handlerProvider(scope: Construct, props: HandlerProviderProps): cr.Provider {
  const { settings } = props;
  const logGroup = new logs.LogGroup(scope, 'ProviderLogs', {
    retention: settings.logRetentionDays as logs.RetentionDays,
    removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
  });
  const frameworkRole = new iam.Role(scope, 'ProviderRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `Custom resource provider that ${props.purpose} of ${settings.stackName}`,
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
  const provider = new cr.Provider(scope, 'Provider', {
    // The handler's published version (`live`); the framework's own function stays unversioned: its
    // ARN is the custom resource's service token, which CloudFormation never lets change.
    onEventHandler: props.handler.alias,
    frameworkOnEventRole: frameworkRole,
    logGroup,
  });
  pinFrameworkRuntime(provider);
  const handlerId = Stack.of(scope).getLogicalId(
    props.handler.function.node.defaultChild as lambda.CfnFunction,
  );
  Validations.of(frameworkRole).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${handlerId}.Arn>:*]`,
    reason: `The CDK provider framework may invoke any version of the ${props.handler.node.id} function (grantInvoke adds the function ARN with :*); it is still that one function.`,
  });
  return provider;
}

/**
 * The framework's own function is plain JavaScript with no native code: run it like ours, on
 * Node.js 24 and arm64, rather than on whatever runtime and architecture CDK picks.
 */
function pinFrameworkRuntime(provider: cr.Provider): void {
  for (const child of provider.node.findAll()) {
    if (child instanceof lambda.CfnFunction) {
      child.runtime = lambda.Runtime.NODEJS_24_X.name;
      child.architectures = [lambda.Architecture.ARM_64.name];
      Validations.of(child).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_REASON });
    }
  }
}
