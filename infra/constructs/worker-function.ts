import { join } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BUNDLE_BANNER, BUNDLE_TARGET } from '../bundling.js';
import { REPO_ROOT } from '../paths.js';
import { LIVE_ALIAS, NODE_RUNTIME_REASON } from './handler-function.js';

export interface WorkerFunctionProps {
  /** The step queue the function serves: its SQS event source. */
  stepQueue: sqs.IQueue;
  /** Where replies go (the manager's reply queue): the only queue the function may send to. */
  replyQueue: sqs.IQueue;
  /** The module to bundle, and its export that is the `lambdaWorker(...)`. */
  entry: string;
  handler: string;
  description?: string;
  /** The longest a step may take (Lambda: 15 minutes at most); at most the step queue's visibility timeout. @default 60 s */
  timeout?: Duration;
  /** @default 512 */
  memorySize?: number;
  /** Most concurrent invocations the event source starts (2 to 1000). @default 10 */
  maxConcurrency?: number;
  /** Requests per invocation, handled at once. @default 10 */
  batchSize?: number;
  /** How long the event source gathers a batch. @default none: a request is handed over as it comes */
  maxBatchingWindow?: Duration;
  /** @default one month */
  logRetention?: logs.RetentionDays;
  /** The log group's fate with the stack. @default RETAIN */
  removalPolicy?: RemovalPolicy;
  /** X-Ray active tracing. @default false */
  tracing?: boolean;
  environment?: Record<string, string>;
  /** Files (from the project root) copied beside the bundle, for the worker to read at run time. */
  files?: string[];
  /** The project the entry belongs to: its package-lock.json and tsconfig.json. @default this repository */
  projectRoot?: string;
}

/** The visibility timeout SQS gives a queue that does not set one. */
const SQS_DEFAULT_VISIBILITY_SECONDS = 30;

/**
 * A worker as a Lambda function (`lambdaWorker` in `switchyard-worker/lambda`): Node.js 24 on arm64,
 * bundled locally with esbuild, triggered by its step queue with partial batch responses, and a role
 * that may only receive from that queue, send to the reply queue (KMS too, should the queues use a
 * key) and write its own log group.
 */
export class WorkerFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly eventSource: SqsEventSource;
  /** The published version the step queue invokes (`live`), as every function of the stack is. */
  readonly alias: lambda.Alias;

  constructor(scope: Construct, id: string, props: WorkerFunctionProps) {
    super(scope, id);
    const timeout = props.timeout ?? Duration.seconds(60);
    checkVisibility(props.stepQueue, timeout);
    const projectRoot = props.projectRoot ?? REPO_ROOT;
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `worker of the step queue ${props.stepQueue.node.path}`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    const files = props.files ?? [];
    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: props.handler,
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout,
      environment: props.environment,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      tracing: props.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        mainFields: ['module', 'main'],
        minify: true,
        keepNames: true,
        bundleAwsSDK: true,
        externalModules: [],
        banner: BUNDLE_BANNER,
        tsconfig: join(projectRoot, 'tsconfig.json'),
        logLevel: LogLevel.WARNING,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir, outputDir) =>
            files.map((file) => `cp "${join(inputDir, file)}" "${outputDir}"`),
        },
      },
    });
    this.eventSource = new SqsEventSource(props.stepQueue, {
      batchSize: props.batchSize ?? 10,
      maxBatchingWindow: props.maxBatchingWindow,
      maxConcurrency: props.maxConcurrency ?? 10,
      reportBatchItemFailures: true,
    });
    this.alias = new lambda.Alias(this, 'Live', {
      aliasName: LIVE_ALIAS,
      version: this.function.currentVersion,
    });
    // Receive, delete and change visibility on the step queue (and kms:Decrypt with a key) come with it.
    this.alias.addEventSource(this.eventSource);
    // Only SendMessage (grantSendMessages would add GetQueueAttributes and GetQueueUrl, which a reply
    // to the URL in reply_to never calls); with a KMS key, what SQS needs of a sender's key.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'SendReplies',
        actions: ['sqs:SendMessage'],
        resources: [props.replyQueue.queueArn],
      }),
    );
    props.replyQueue.encryptionMasterKey?.grant(this.role, 'kms:GenerateDataKey', 'kms:Decrypt');
    Validations.of(this.function).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_REASON });
    if (props.tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray tracing: xray:PutTraceSegments and PutTelemetryRecords have no resource-level permissions.',
      });
    }
  }
}

/**
 * Lambda refuses an event source whose queue hides a message for less than the function's timeout:
 * the request would come back while its worker still runs. Said at synth rather than at deploy.
 */
function checkVisibility(queue: sqs.IQueue, timeout: Duration): void {
  if (!(queue instanceof sqs.Queue)) return;
  const cfn = queue.node.defaultChild as sqs.CfnQueue;
  const visibility =
    typeof cfn.visibilityTimeout === 'number' ? cfn.visibilityTimeout : SQS_DEFAULT_VISIBILITY_SECONDS;
  if (timeout.toSeconds() > visibility) {
    throw new Error(
      `the worker of ${queue.node.path} has a timeout of ${timeout.toSeconds()} s, longer than its queue's ` +
        `visibility timeout (${visibility} s): raise the queue's visibility timeout or lower the function's`,
    );
  }
}
