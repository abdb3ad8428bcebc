import { ArnFormat, CfnOutput, Duration, Fn, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import { parkedQueueOf } from '../functions/aws/parked-queue.js';
import { poisonQueueOf } from '../functions/transport/amqp/poison-queue-name.js';
import { replyQueuesOf } from '../functions/transport/amqp/reply-shards.js';
import { SwitchyardApi } from './constructs/api.js';
import { CanaryDeployment } from './constructs/canary-deployment.js';
import { type FunctionNetwork, HandlerFunction, LIVE_ALIAS } from './constructs/handler-function.js';
import { SwitchyardHttpApi } from './constructs/http-api.js';
import { JobArchive } from './constructs/job-archive.js';
import { JobEvents } from './constructs/job-events.js';
import { Monitoring, QUEUE_AGE_THRESHOLDS } from './constructs/monitoring.js';
import { RabbitMqBus } from './constructs/rabbitmq-bus.js';
import { RunTimeQueueRemoval } from './constructs/run-time-queue-removal.js';
import { WorkflowSchedules } from './constructs/schedules.js';
import { SqsBus } from './constructs/sqs-bus.js';
import { SwitchyardTable, TABLE_SCHEMA } from './constructs/table.js';
import { TableBackup } from './constructs/table-backup.js';
import { TimerQueue } from './constructs/timers.js';
import { WorkflowRegistration } from './constructs/workflow-registration.js';
import { FUNCTION_SIZES } from './function-sizes.js';
import { handlerEnvironment } from './handler-environment.js';
import { addLambdaWorkers, checkLambdaWorkers } from './lambda-workers.js';
import { checkStepQueueNames, MANAGER_QUEUES, REPLY_QUEUE, STACK_TAG, sqsQueueName } from './queue-names.js';
import type { SwitchyardSettings } from './settings.js';
import { addTokenAuthorizer } from './token-authorizer.js';
import type { DeployedWorkflows } from './workflow-queues.js';

export interface SwitchyardStackProps extends StackProps {
  settings: SwitchyardSettings;
  workflows: DeployedWorkflows;
}

/** Memory and timeout per function (function-sizes.ts). */
const SIZES = Object.fromEntries(
  Object.entries(FUNCTION_SIZES).map(([name, { memorySize, timeoutSeconds }]) => [
    name,
    { memorySize, timeout: Duration.seconds(timeoutSeconds) },
  ]),
) as { [name in keyof typeof FUNCTION_SIZES]: { memorySize: number; timeout: Duration } };

/** Everything the manager functions do to the table (transitions, outbox, fan-in counters, paging). */
const STORE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:Query',
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  // Transactions need no action of their own: each item is authorised by its Put/Update/Delete, and
  // a ConditionCheck by ConditionCheckItem.
  'dynamodb:ConditionCheckItem',
];
/**
 * Queues for workflows registered after the deploy are created with the stack's settings and its tag
 * (tagging at creation needs TagQueue). CreateQueue sets the queue's attributes itself: no
 * SetQueueAttributes, so no existing queue's policy or settings can be changed.
 */
const CREATE_QUEUE_ACTIONS = ['sqs:CreateQueue', 'sqs:TagQueue'];
const LOOK_UP_QUEUE_ACTIONS = ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes'];

/** Registering a definition: read the versions, write the next one conditionally. */
const REGISTER_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
];
const SQS_EVENT_BATCH = {
  batchSize: 10,
  maxBatchingWindow: Duration.seconds(1),
  reportBatchItemFailures: true,
};
/** Lambda's most retries of an asynchronous invocation that failed (after the first try). */
const ASYNC_RETRY_ATTEMPTS = 2;
/** The Amazon MQ mapping's batch: Lambda runs one invocation at a time per mapping (docs/deploying.md). */
const MQ_EVENT_BATCH = { batchSize: 10, maximumBatchingWindowInSeconds: 1 };

/** The deployed Switchyard: API, store, bus (SQS or Amazon MQ for RabbitMQ), timers, monitoring. */
export class SwitchyardStack extends Stack {
  constructor(scope: Construct, id: string, props: SwitchyardStackProps) {
    super(scope, id, { description: 'Switchyard workflow manager', ...props });
    const { settings, workflows } = props;
    checkStepQueueNames(workflows.stepQueues);
    checkLambdaWorkers(settings, workflows.stepQueues);
    // The functions may use only queues with this tag (queues made at run time get it at creation).
    Tags.of(this).add(STACK_TAG, settings.stackName);

    const store = new SwitchyardTable(this, 'Store', {
      destroy: settings.destroy,
      stream: settings.jobEvents || settings.archive.enabled,
    });
    if (settings.backup.enabled) {
      new TableBackup(this, 'Backup', {
        table: store.table,
        stackName: settings.stackName,
        settings: settings.backup,
        destroy: settings.destroy,
      });
    }
    const timerQueue = new TimerQueue(this, 'TimerQueue', {
      queuePrefix: settings.queuePrefix,
      timersTimeout: SIZES.timers.timeout,
    });
    const sqsBus =
      settings.bus === 'sqs'
        ? new SqsBus(this, 'SqsBus', {
            queuePrefix: settings.queuePrefix,
            stepQueues: workflows.stepQueues,
            stepVisibilityTimeout: settings.stepVisibilityTimeout,
            repliesTimeout: SIZES.replies.timeout,
            deadLettersTimeout: SIZES.deadLetters.timeout,
          })
        : undefined;
    const mqBus =
      settings.bus === 'rabbitmq'
        ? new RabbitMqBus(this, 'RabbitMqBus', {
            stackName: settings.stackName,
            broker: settings.broker,
            tracing: settings.tracing,
            destroy: settings.destroy,
            logRetentionDays: settings.logRetentionDays,
          })
        : undefined;

    const schedules = new WorkflowSchedules(this, 'Schedules', { settings });
    const environment = {
      ...handlerEnvironment({ settings, store, timerQueue, sqsBus, mqBus }),
      ...schedules.environment,
    };
    const network: FunctionNetwork | undefined = mqBus?.functionNetwork;
    const common = { environment, settings, network };

    const apiFunction = new HandlerFunction(this, 'ApiFunction', {
      ...common,
      ...SIZES.api,
      reservedConcurrency: settings.api.reservedConcurrency || undefined,
      handler: 'api',
      description: 'Switchyard HTTP API and dashboard (API Gateway REST proxy events)',
    });
    const repliesFunction = new HandlerFunction(this, 'RepliesFunction', {
      ...common,
      ...SIZES.replies,
      handler: sqsBus ? 'replies-sqs' : 'replies-mq',
      description: `Switchyard replies from the ${REPLY_QUEUE} queue (${settings.bus})`,
    });
    const timersFunction = new HandlerFunction(this, 'TimersFunction', {
      ...common,
      ...SIZES.timers,
      handler: 'timers',
      description: 'Switchyard deadlines: delayed messages from the timer queue, and a sweep every minute',
    });
    const deadLettersFunction = sqsBus
      ? new HandlerFunction(this, 'DeadLettersFunction', {
          ...common,
          ...SIZES.deadLetters,
          handler: 'dead-letters',
          description: 'Switchyard requests that exhausted their step queue: failed attempts',
        })
      : undefined;
    // Workflow schedules: EventBridge Scheduler invokes the timers function at each tick.
    schedules.invoke(timersFunction);
    schedules.allowSync(apiFunction, timersFunction);
    schedules.allowRearm(timersFunction);
    this.retryAsyncInvocations(timersFunction, timerQueue);
    const managerFunctions = [
      apiFunction,
      repliesFunction,
      timersFunction,
      ...(deadLettersFunction ? [deadLettersFunction] : []),
    ];

    const queuesUnderPrefix = this.formatArn({ service: 'sqs', resource: `${settings.queuePrefix}*` });
    // Only queues tagged with this stack: a prefix alone could match another stack's queues.
    const taggedQueues = { StringEquals: { [`aws:ResourceTag/${STACK_TAG}`]: settings.stackName } };
    const taggingQueues = { StringEquals: { [`aws:RequestTag/${STACK_TAG}`]: settings.stackName } };
    for (const fn of managerFunctions) {
      fn.allow('UseStore', STORE_ACTIONS, store.resourceArns);
      if (sqsBus) {
        // Workflows registered after the deploy get their queues then: their names are known, not their ARNs.
        fn.allow('SendToQueues', ['sqs:SendMessage', 'sqs:GetQueueUrl'], [queuesUnderPrefix], taggedQueues);
      } else {
        fn.allow('ArmTimers', ['sqs:SendMessage'], [timerQueue.queue.queueArn]);
      }
      if (mqBus)
        fn.allow('ReadBrokerCredentials', ['secretsmanager:GetSecretValue'], [mqBus.credentials.secretArn]);
      if (settings.secretsPrefix !== undefined) this.allowParamsSecrets(fn, settings.secretsPrefix);
    }
    const allowCreatingQueues = (fn: HandlerFunction): void => {
      fn.allow('CreateStepQueues', CREATE_QUEUE_ACTIONS, [queuesUnderPrefix], taggingQueues);
      fn.allow('LookUpStepQueues', LOOK_UP_QUEUE_ACTIONS, [queuesUnderPrefix], taggedQueues);
    };
    if (sqsBus) {
      allowCreatingQueues(apiFunction);
      this.acknowledgeQueuePrefix([...managerFunctions], settings.queuePrefix);
    }

    const { eventSources } = settings;
    if (sqsBus) {
      repliesFunction.alias.addEventSource(
        new SqsEventSource(sqsBus.replyQueue, {
          ...SQS_EVENT_BATCH,
          maxConcurrency: eventSources.repliesMaxConcurrency,
        }),
      );
      deadLettersFunction?.alias.addEventSource(
        new SqsEventSource(sqsBus.stepDeadLetterQueue, {
          ...SQS_EVENT_BATCH,
          maxConcurrency: eventSources.deadLettersMaxConcurrency,
        }),
      );
    }
    const brokerMappings = mqBus
      ? this.triggerFromBroker(repliesFunction, mqBus, settings.broker.replyQueues)
      : undefined;
    timersFunction.alias.addEventSource(
      new SqsEventSource(timerQueue.queue, {
        ...SQS_EVENT_BATCH,
        maxConcurrency: eventSources.timersMaxConcurrency,
      }),
    );
    new events.Rule(this, 'TimerSweep', {
      description: 'Switchyard timers sweep: deadlines whose delayed message was lost or is not due yet',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new targets.LambdaFunction(timersFunction.alias)],
    });

    const tokenAuthorizer =
      settings.api.auth === 'token' ? addTokenAuthorizer(this, settings, store) : undefined;
    const apiProps = { handler: apiFunction.alias, authorizer: tokenAuthorizer?.function.alias, settings };
    const api =
      settings.api.kind === 'http'
        ? new SwitchyardHttpApi(this, 'HttpApi', apiProps)
        : new SwitchyardApi(this, 'Api', apiProps);
    // settings.ts refuses -c workers=lambda on the RabbitMQ bus.
    const workerFunctions =
      sqsBus && settings.workers.kind === 'lambda' ? addLambdaWorkers(this, settings, sqsBus) : [];

    // On RabbitMQ the registration also declares the reply queue the broker's event source reads,
    // so it runs even when no workflows are deployed with the stack.
    let registerFunction: HandlerFunction | undefined;
    let registration: WorkflowRegistration | undefined;
    if (workflows.definitions.length > 0 || mqBus) {
      registerFunction = new HandlerFunction(this, 'RegisterWorkflowsFunction', {
        ...common,
        ...SIZES.registerWorkflows,
        handler: 'register-workflows',
        description: 'Switchyard: registers the workflows deployed with the stack (custom resource)',
      });
      registerFunction.allow('RegisterWorkflows', REGISTER_ACTIONS, store.resourceArns);
      schedules.allowSync(registerFunction, timersFunction);
      if (sqsBus) {
        allowCreatingQueues(registerFunction);
        this.acknowledgeQueuePrefix([registerFunction], settings.queuePrefix);
      }
      if (mqBus) {
        registerFunction.allow(
          'ReadBrokerCredentials',
          ['secretsmanager:GetSecretValue'],
          [mqBus.credentials.secretArn],
        );
      }
      registration = new WorkflowRegistration(this, 'WorkflowRegistration', {
        handler: registerFunction,
        definitions: workflows.definitions,
        namespace: workflows.namespace,
        queuePrefix: workflows.queuePrefix,
        settings,
      });
      registration.node.addDependency(store.table);
      // Registering creates the workflows' schedules: in the group, invoking with the role's policy.
      registration.node.addDependency(schedules);
      // The reply queue must exist before the event source mapping polls it.
      for (const mapping of brokerMappings ?? []) mapping.node.addDependency(registration);
    }

    if (sqsBus) {
      const removal = new RunTimeQueueRemoval(this, 'RunTimeQueueRemoval', {
        settings,
        declaredQueues: [...Object.values(MANAGER_QUEUES), ...workflows.stepQueues].map((queue) =>
          sqsQueueName(settings.queuePrefix, queue),
        ),
      });
      // Deleted after the functions that create queues: none is created once the removal has run.
      for (const creator of [apiFunction, registerFunction])
        creator?.function.node.addDependency(removal.resource);
    }

    const jobEvents = settings.jobEvents
      ? new JobEvents(this, 'JobEvents', { settings, table: store.table })
      : undefined;

    const archive = settings.archive.enabled
      ? new JobArchive(this, 'Archive', { settings, table: store.table })
      : undefined;
    if (archive) {
      new CfnOutput(this, 'ArchiveBucket', {
        value: archive.bucket.bucketName,
        description: 'switchyard archive list --s3 s3://<bucket> reads the jobs archived as they expired',
      });
    }
    const monitoring = new Monitoring(this, 'Monitoring', {
      stackName: settings.stackName,
      alarmEmail: settings.alarms.email,
      table: store.table,
      scheduleGroup: schedules.groupName,
      deadLetterQueues: {
        TimerQueue: timerQueue.deadLetterQueue,
        TimerInvocationFailures: timerQueue.failures,
        ...(jobEvents ? { JobEventFailures: jobEvents.failures } : {}),
        ...(sqsBus
          ? { ReplyQueue: sqsBus.replyDeadLetterQueue, StepQueues: sqsBus.stepDeadLetterQueue }
          : {}),
        ...(archive ? { ArchiveFailures: archive.failures } : {}),
      },
      queueAges: {
        Timers: { queue: timerQueue.queue, seconds: QUEUE_AGE_THRESHOLDS.timer },
        TimerDeadLetters: { queue: timerQueue.deadLetterQueue, seconds: QUEUE_AGE_THRESHOLDS.deadLetters },
        ...(sqsBus
          ? {
              Replies: { queue: sqsBus.replyQueue, seconds: QUEUE_AGE_THRESHOLDS.reply },
              ReplyDeadLetters: {
                queue: sqsBus.replyDeadLetterQueue,
                seconds: QUEUE_AGE_THRESHOLDS.deadLetters,
              },
              StepDeadLetters: {
                queue: sqsBus.stepDeadLetterQueue,
                seconds: QUEUE_AGE_THRESHOLDS.drainedDeadLetters,
              },
            }
          : {}),
      },
      functions: Object.fromEntries(
        [
          ...managerFunctions,
          ...(registerFunction ? [registerFunction] : []),
          ...(tokenAuthorizer ? [tokenAuthorizer.function] : []),
          ...(jobEvents ? [jobEvents.function] : []),
          ...workerFunctions,
          ...(archive ? [archive.function] : []),
        ].map((fn) => [fn.node.id, fn.function]),
      ),
      apiStage: api instanceof SwitchyardHttpApi ? api.stage : api.restApi.deploymentStage,
      stepQueues: sqsBus ? [...sqsBus.stepQueues.values()] : [],
      tableIndexes: TABLE_SCHEMA.indexes.map((index) => index.name),
      broker: mqBus
        ? {
            brokerName: mqBus.brokerName,
            replyQueue: REPLY_QUEUE,
            parkedQueue: parkedQueueOf(REPLY_QUEUE),
            poisonedQueue: poisonQueueOf(REPLY_QUEUE),
          }
        : undefined,
    });

    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL of the API and the dashboard' });
    if (api instanceof SwitchyardApi && api.apiKey) {
      new CfnOutput(this, 'ApiKeyId', {
        value: api.apiKey.keyId,
        description: 'aws apigateway get-api-key --include-value --api-key <id> prints the key',
      });
    }
    if (tokenAuthorizer) {
      const arn = tokenAuthorizer.rootSecret.secretArn;
      new CfnOutput(this, 'RootTokenSecretArn', {
        value: arn,
        description: 'Secrets Manager secret holding the root token (admin of every namespace)',
      });
      new CfnOutput(this, 'RootTokenCommand', {
        value: `aws secretsmanager get-secret-value --secret-id ${arn} --query SecretString --output text`,
        description: 'Prints the root token: send it as "Authorization: Bearer <token>"',
      });
    }
    new CfnOutput(this, 'TableName', { value: store.table.tableName });
    new CfnOutput(this, 'TimerQueueUrl', { value: timerQueue.queue.queueUrl });
    new CfnOutput(this, 'QueuePrefix', { value: settings.queuePrefix });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: monitoring.topic.topicArn,
      description: 'Every alarm notifies this topic: subscribe your pager or chat to it',
    });
    new CfnOutput(this, 'BusinessAlarmTopicArn', {
      value: monitoring.businessTopic.topicArn,
      description:
        'The JobsFailed alarm notifies this topic (not the paging one): subscribe the workflows’ owners',
    });
    new CfnOutput(this, 'DashboardName', { value: monitoring.dashboard.dashboardName });
    // -c canaryDeployments=true (on in the production profile): a new version of the API or the
    // replies function takes 10% of its invocations for 5 minutes first, rolled back on its alarms,
    // which page too (a deploy going back is for a person to look at).
    if (settings.canaryDeployments) {
      new CanaryDeployment(this, 'ApiCanary', apiFunction, monitoring.topic);
      new CanaryDeployment(this, 'RepliesCanary', repliesFunction, monitoring.topic);
    }
    if (sqsBus) {
      new CfnOutput(this, 'ReplyQueueUrl', { value: sqsBus.replyQueue.queueUrl });
      new CfnOutput(this, 'StepDeadLetterQueueUrl', { value: sqsBus.stepDeadLetterQueue.queueUrl });
      new CfnOutput(this, 'StepQueueUrls', {
        value: this.toJsonString(
          Object.fromEntries([...sqsBus.stepQueues].map(([name, queue]) => [name, queue.queueUrl])),
        ),
        description: 'JSON: step queue name (without prefix) to queue URL',
      });
    }
    if (mqBus) {
      new CfnOutput(this, 'BrokerAmqpsEndpoint', { value: mqBus.amqpsEndpoint });
      new CfnOutput(this, 'BrokerConsoleUrl', { value: mqBus.consoleUrl });
      new CfnOutput(this, 'BrokerSecretArn', { value: mqBus.credentials.secretArn });
      new CfnOutput(this, 'VpcId', { value: mqBus.vpc.vpcId });
      new CfnOutput(this, 'PrivateSubnetIds', {
        value: Fn.join(
          ',',
          mqBus.vpc.isolatedSubnets.map((subnet) => subnet.subnetId),
        ),
      });
      new CfnOutput(this, 'BrokerClientSecurityGroupId', {
        value: mqBus.clientSecurityGroup.securityGroupId,
        description: 'Attach to workers in this VPC so they reach the broker on 5671',
      });
    }
  }

  /**
   * Amazon MQ has no L2 event source: a raw mapping on each reply queue, logging in with the broker
   * secret. Lambda reads the secret and looks up the broker's network with the function's role.
   */
  private triggerFromBroker(
    replies: HandlerFunction,
    bus: RabbitMqBus,
    replyQueues: number,
  ): lambda.CfnEventSourceMapping[] {
    replies.allow('DescribeBroker', ['mq:DescribeBroker'], [bus.broker.attrArn]);
    // secretsmanager:GetSecretValue on the broker secret, and the network interface actions, it already has.
    const describe = replies.allowUnscoped(
      'DescribeBrokerNetwork',
      ['ec2:DescribeSecurityGroups', 'ec2:DescribeVpcs'],
      'The Amazon MQ event source mapping describes the broker network with the function role; EC2 Describe actions have no resource-level permissions.',
    );
    const mapping = (id: string, queue: string): lambda.CfnEventSourceMapping => {
      const created = new lambda.CfnEventSourceMapping(this, id, {
        functionName: replies.alias.functionArn,
        eventSourceArn: bus.broker.attrArn,
        queues: [queue],
        ...MQ_EVENT_BATCH,
        sourceAccessConfigurations: [
          { type: 'BASIC_AUTH', uri: bus.credentials.secretArn },
          { type: 'VIRTUAL_HOST', uri: '/' },
        ],
      });
      created.node.addDependency(replies.role, describe);
      return created;
    };
    // Each mapping runs one invocation at a time: one per reply queue (jobs are sharded over them by id,
    // functions/transport/amqp/reply-shards.ts), and the parked queue's drain never waits for the replies.
    const replyMappings = replyQueuesOf(REPLY_QUEUE, replyQueues).map((queue, n) =>
      mapping(n === 0 ? 'RepliesFromBroker' : `RepliesFromBroker${n}`, queue),
    );
    const parkedMapping = mapping('ParkedRepliesFromBroker', parkedQueueOf(REPLY_QUEUE));
    for (const replyMapping of replyMappings) parkedMapping.node.addDependency(replyMapping);
    return [...replyMappings, parkedMapping];
  }

  /**
   * Scheduler and the sweep's rule invoke the timers function asynchronously: Scheduler's retries
   * cover only the delivery, so a tick that throws gets Lambda's retries, then lands in the failure
   * queue (alarmed) instead of vanishing; the repair sweep re-arms its schedule meanwhile.
   */
  private retryAsyncInvocations(timers: HandlerFunction, timerQueue: TimerQueue): void {
    timers.allow('SendFailedInvocations', ['sqs:SendMessage'], [timerQueue.failures.queueArn]);
    new lambda.EventInvokeConfig(this, 'TimersAsyncInvocations', {
      function: timers.function,
      // Scheduler and the sweep's rule invoke the alias: its own configuration applies, not $LATEST's.
      qualifier: LIVE_ALIAS,
      retryAttempts: ASYNC_RETRY_ATTEMPTS,
      maxEventAge: Duration.hours(6),
      // Bound by hand: SqsDestination would also grant GetQueueAttributes and GetQueueUrl.
      onFailure: { bind: () => ({ destination: timerQueue.failures.queueArn }) },
    }).node.addDependency(timers.role);
  }

  /**
   * `-c secretsPrefix`: the secrets `params` name, under the prefix only. A secret's ARN ends in a
   * random suffix (`-AbCdEf`), so the grant names the prefix and a wildcard.
   */
  private allowParamsSecrets(fn: HandlerFunction, prefix: string): void {
    const arn = this.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${prefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    fn.allow('ReadParamsSecrets', ['secretsmanager:GetSecretValue'], [arn]);
    fn.acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*]`,
      `The secrets workflows name in params are read under the -c secretsPrefix ${prefix} only; a secret's ARN ends in a random suffix, so only a wildcard after the name matches it.`,
    );
  }

  private acknowledgeQueuePrefix(functions: HandlerFunction[], prefix: string): void {
    for (const fn of functions) {
      fn.acknowledge(
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${prefix}*]`,
        `The queues of workflows registered after the deploy are created then, named ${prefix}<queue> (protocol.md, SQS): their ARNs are known only by that prefix.`,
      );
    }
  }
}
