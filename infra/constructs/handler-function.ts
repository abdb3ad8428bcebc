import { type Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE_BANNER, BUNDLE_TARGET, bundleDefines, bundleEnvironment } from '../bundling.js';
import { handlerEntry, REPO_ROOT } from '../paths.js';
import type { SwitchyardSettings } from '../settings.js';

/** Why cdk-nag's "latest runtime" rule is acknowledged on every function. */
export const NODE_RUNTIME_REASON =
  'Pinned to nodejs24.x, the runtime the handlers are bundled for (node24) and tested on: moving to a newer runtime is a deliberate upgrade, not one that happens when Lambda adds a runtime.';

/** The alias every caller invokes (HandlerFunction.alias). */
export const LIVE_ALIAS = 'live';

/** Where a function that talks to the broker runs. */
export interface FunctionNetwork {
  vpc: ec2.IVpc;
  subnets: ec2.SubnetSelection;
  securityGroups: ec2.ISecurityGroup[];
}

export interface HandlerFunctionProps {
  /** File name under `functions/handlers/`, without `.ts`. */
  handler: string;
  description: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  settings: SwitchyardSettings;
  network?: FunctionNetwork;
  /** Concurrent executions reserved for the function (and its cap); undefined: none. */
  reservedConcurrency?: number;
}

/**
 * One handler as a Lambda function: Node.js 24 on arm64, bundled locally with esbuild, its own log group,
 * and a role that starts with nothing but writing to that log group (no AWS managed policies).
 */
export class HandlerFunction extends Construct {
  /** The bundled entry point, `functions/handlers/<handler>.ts`. */
  readonly entry: string;
  readonly function: NodejsFunction;
  /**
   * `live`, on the version published from this deploy's code and configuration: what the event
   * sources, API Gateway, EventBridge and Scheduler invoke, so that a deploy (or a CodeDeploy
   * canary, `-c canaryDeployments=true`) moves every caller at once, and can move them back.
   */
  readonly alias: lambda.Alias;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: HandlerFunctionProps) {
    super(scope, id);
    const { settings } = props;
    this.entry = handlerEntry(props.handler);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.handler} handler of ${settings.stackName}`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    const networkPolicy = props.network ? this.allowVpcNetworking() : undefined;

    this.function = new NodejsFunction(this, 'Function', {
      entry: this.entry,
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      environment: { ...props.environment, ...bundleEnvironment(settings) },
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      tracing: settings.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}/package-lock.json`,
      vpc: props.network?.vpc,
      vpcSubnets: props.network?.subnets,
      securityGroups: props.network?.securityGroups,
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        // The same options as infra/bundling.ts's esbuildOptions, which the bundle test and bench build with.
        target: BUNDLE_TARGET,
        mainFields: ['module', 'main'],
        minify: true,
        // With -c sourceMaps=true, stack traces point into the TypeScript sources.
        sourceMap: settings.sourceMaps,
        sourcesContent: false,
        define: bundleDefines(settings),
        // The SDK clients are bundled too: see infra/README.md.
        bundleAwsSDK: true,
        externalModules: [],
        banner: BUNDLE_BANNER,
        tsconfig: `${REPO_ROOT}/tsconfig.json`,
        logLevel: LogLevel.WARNING,
      },
    });
    // Lambda checks the network permissions when it creates the function, so they must exist first.
    if (networkPolicy) this.function.node.addDependency(networkPolicy);
    this.alias = new lambda.Alias(this, 'Live', {
      aliasName: LIVE_ALIAS,
      version: this.function.currentVersion,
    });
    Validations.of(this.function).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_REASON });
    if (settings.tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray tracing (-c tracing=true): xray:PutTraceSegments and PutTelemetryRecords have no resource-level permissions.',
      });
    }
  }

  /** Grants the function's role `actions` on `resources`, under `conditions` if given. */
  allow(sid: string, actions: string[], resources: string[], conditions?: Record<string, unknown>): void {
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ sid, actions, resources, conditions }));
  }

  /** Grants actions that have no resource-level permissions, in a policy of their own with the reason. */
  allowUnscoped(sid: string, actions: string[], reason: string): iam.Policy {
    const policy = new iam.Policy(this, sid, {
      statements: [new iam.PolicyStatement({ sid, actions, resources: ['*'] })],
    });
    this.role.attachInlinePolicy(policy);
    Validations.of(policy).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason });
    return policy;
  }

  /** Acknowledges a cdk-nag finding on the function's role, with the reason it is acceptable. */
  acknowledge(id: string, reason: string): void {
    Validations.of(this.role).acknowledge({ id, reason });
  }

  /**
   * What Lambda needs to attach the function to the VPC. The Describe actions have no resource-level
   * permissions; the ones that change interfaces are held to this account and region.
   */
  private allowVpcNetworking(): iam.Policy {
    const stack = Stack.of(this);
    const policy = new iam.Policy(this, 'NetworkInterfaces', {
      statements: [
        new iam.PolicyStatement({
          sid: 'DescribeNetwork',
          actions: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'],
          resources: ['*'],
        }),
        new iam.PolicyStatement({
          sid: 'ManageNetworkInterfaces',
          actions: [
            'ec2:CreateNetworkInterface',
            'ec2:DeleteNetworkInterface',
            'ec2:AssignPrivateIpAddresses',
            'ec2:UnassignPrivateIpAddresses',
          ],
          resources: [`arn:${stack.partition}:ec2:${stack.region}:${stack.account}:*/*`],
        }),
      ],
    });
    this.role.attachInlinePolicy(policy);
    Validations.of(policy).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets have no resource-level permissions; Lambda needs them to place the function in the VPC.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:*/*]',
        reason:
          'Lambda creates and deletes its own network interfaces, whose ids are not known before it does; held to this account and region as the Lambda guide advises.',
      },
    );
    return policy;
  }
}
