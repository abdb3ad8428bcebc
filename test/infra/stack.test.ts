import { readFileSync } from 'node:fs';
import { type Stack, Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, test } from 'vitest';
import { loadWorkflows } from '../../engine/definition/load.js';
import { HandlerFunction } from '../../infra/constructs/handler-function.js';
import { REGISTRATION_RESOURCE_TYPE } from '../../infra/constructs/workflow-registration.js';
import { FIXTURE_WORKFLOWS, type SynthesizedStack, synthStack } from './synth-stack.js';
import {
  asList,
  identityStatements,
  methodsByRoute,
  renderValue,
  resourcesOfType,
} from './template-queries.js';

const CDK = { timeout: 60_000 };
const FIXTURE_STEP_QUEUES = ['book-split', 'summing', 'word-counter'];

/**
 * `*` resources are allowed only for actions without resource-level permissions, and wildcard ARNs only
 * where the resource's name is not known at deploy time. Each entry is documented in infra/README.md.
 */
const UNSCOPED_ACTIONS = new Set([
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeVpcs',
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'sqs:ListQueues',
  // The job-events function's DynamoDB stream event source mapping.
  'dynamodb:ListStreams',
]);
const WILDCARD_ARNS = [
  // queues of workflows registered after the deploy
  /^arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:[A-Za-z0-9_-]+\*$/,
  // network interfaces Lambda creates for VPC functions
  /^arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:\*\/\*$/,
  // versions of the custom resource functions, invoked by their providers
  /^<(RegisterWorkflows|RemoveQueues)Function[A-Z0-9]+\.Arn>:\*$/,
  // workflow schedules, created at run time in the stack's schedule group
  /^arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/[A-Za-z0-9_.-]+\/\*$/,
];

function handlerFunctions(stack: Stack): HandlerFunction[] {
  return stack.node.children.filter((child): child is HandlerFunction => child instanceof HandlerFunction);
}

function logicalIdOf(stack: Stack, fn: HandlerFunction): string {
  return stack.getLogicalId(fn.function.node.defaultChild as lambda.CfnFunction);
}

/** The logical id of a function's `live` alias: what every event source, rule and API invokes. */
function aliasIdOf(stack: Stack, fn: HandlerFunction): string {
  return stack.getLogicalId(fn.alias.node.defaultChild as lambda.CfnAlias);
}

/** How an SQS event source mapping names the alias: `<function name>:live`, from the alias's ARN. */
function sqsMappingTarget(stack: Stack, fn: HandlerFunction): unknown {
  return {
    'Fn::Join': ['', [{ 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: aliasIdOf(stack, fn) }] }] }, ':live']],
  };
}

function functionProperties(synthesized: SynthesizedStack, id: string): Record<string, unknown> {
  const fn = synthesized.stack.node.findChild(id) as HandlerFunction;
  const resource = resourcesOfType(synthesized.template, 'AWS::Lambda::Function')[
    logicalIdOf(synthesized.stack, fn)
  ];
  if (!resource?.Properties) throw new Error(`no function ${id}`);
  return resource.Properties;
}

function environmentOf(synthesized: SynthesizedStack, id: string): Record<string, unknown> {
  return (functionProperties(synthesized, id).Environment as { Variables: Record<string, unknown> })
    .Variables;
}

/** Every acknowledged cdk-nag finding in the tree, with its reason. */
function acknowledgments(root: IConstruct): { path: string; id: string; reason: string }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}

/** Findings cdk-nag still reports (errors and warnings), as readable lines. */
function unacknowledgedFindings(synthesized: SynthesizedStack): string[] {
  const report = new AwsSolutionsChecks().validateScope(synthesized.app);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map(
      (resource) => `${violation.severity} ${violation.ruleName} at ${resource.constructPath}`,
    ),
  );
}

function expectLeastPrivilege(synthesized: SynthesizedStack): void {
  const problems: string[] = [];
  for (const statement of identityStatements(synthesized.template)) {
    if (statement.Effect !== 'Allow') continue;
    const actions = asList(statement.Action);
    for (const action of actions)
      if (action.includes('*')) problems.push(`${statement.holder}: action ${action}`);
    for (const resource of asList(statement.Resource).map(renderValue)) {
      if (resource === '*') {
        const scoped = actions.filter((action) => !UNSCOPED_ACTIONS.has(action));
        if (scoped.length > 0) problems.push(`${statement.holder}: ${scoped.join(', ')} on *`);
      } else if (resource.includes('*') && !WILDCARD_ARNS.some((pattern) => pattern.test(resource))) {
        problems.push(`${statement.holder}: ${actions.join(', ')} on ${resource}`);
      }
    }
  }
  expect(problems).toEqual([]);
  // Only API Gateway's region-wide logging role carries an AWS managed policy.
  const managed = Object.entries(resourcesOfType(synthesized.template, 'AWS::IAM::Role'))
    .filter(([, role]) => role.Properties?.ManagedPolicyArns !== undefined)
    .map(([, role]) =>
      asList(role.Properties?.ManagedPolicyArns as unknown[])
        .map(renderValue)
        .join(),
    );
  expect(
    managed.every((arn) =>
      arn.endsWith(':iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
    ),
  ).toBe(true);
}

function expectNagClean(synthesized: SynthesizedStack): void {
  expect(unacknowledgedFindings(synthesized)).toEqual([]);
  const acknowledged = acknowledgments(synthesized.app);
  expect(acknowledged.length).toBeGreaterThan(0);
  for (const { path, id, reason } of acknowledged) {
    expect(reason.length, `acknowledgment ${id} at ${path} needs a concrete reason`).toBeGreaterThan(40);
  }
}

function expectNodeOnArm(synthesized: SynthesizedStack): void {
  const functions = Object.entries(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'));
  expect(functions.length).toBeGreaterThan(0);
  for (const [id, fn] of functions) {
    expect({ id, runtime: fn.Properties?.Runtime, architectures: fn.Properties?.Architectures }).toEqual({
      id,
      runtime: 'nodejs24.x',
      architectures: ['arm64'],
    });
  }
}

describe('SwitchyardStack with the SQS bus (the default)', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack();
  });

  test('deploys no worker functions unless -c workers=lambda: every function is a manager handler or the provider', () => {
    const handlers = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function')).map(
      (fn) => fn.Properties?.Handler,
    );
    expect(new Set(handlers)).toEqual(new Set(['index.handler', 'framework.onEvent']));
  });

  test('every API route needs an API key, except the dashboard page, its assets and the OpenAPI document', () => {
    const routes = methodsByRoute(synthesized.template);
    expect(Object.keys(routes).sort()).toEqual([
      'ANY /{proxy+}',
      'GET /',
      'GET /assets/{proxy+}',
      'GET /openapi.json',
    ]);
    // /api/..., /metrics and /healthz reach the function through /{proxy+}: nothing else matches them.
    expect(routes['ANY /{proxy+}']).toMatchObject({ ApiKeyRequired: true, AuthorizationType: 'NONE' });
    for (const open of ['GET /', 'GET /assets/{proxy+}', 'GET /openapi.json']) {
      expect(routes[open]).toMatchObject({ ApiKeyRequired: false, AuthorizationType: 'NONE' });
    }
    for (const method of Object.values(routes)) {
      expect(method.Integration).toMatchObject({ Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' });
    }
  });

  test('the stage and the usage plan throttle; the plan has no daily quota by default and holds the API key', () => {
    const { template } = synthesized;
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
        }),
      ]),
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue(), Format: Match.anyValue() }),
    });
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 50, BurstLimit: 100 },
      Quota: Match.absent(),
      ApiStages: [Match.objectLike({ ApiId: Match.anyValue(), Stage: Match.anyValue() })],
    });
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 1);
    template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 1);
  });

  test('API Gateway refusals answer in the API error shape', () => {
    synthesized.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'DEFAULT_4XX',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"error":\\{"code"') },
    });
  });

  test('the table: pk/sk strings, gsi1, gsi2 and gsi3 projecting keys only, on demand, PITR, encrypted, TTL, retained', () => {
    const tables = resourcesOfType(synthesized.template, 'AWS::DynamoDB::Table');
    const [table] = Object.values(tables);
    expect(Object.keys(tables)).toHaveLength(1);
    expect(table).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const gsi = (name: string) => ({
      IndexName: name,
      KeySchema: [
        { AttributeName: `${name}pk`, KeyType: 'HASH' },
        { AttributeName: `${name}sk`, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
    expect(table?.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'].map(
        (name) => ({
          AttributeName: name,
          AttributeType: 'S',
        }),
      ),
      GlobalSecondaryIndexes: [gsi('gsi1'), gsi('gsi2'), gsi('gsi3')],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      DeletionProtectionEnabled: true,
    });
  });

  test('one encrypted queue per step queue of the fixture workflows, redriving to the shared DLQ after 5 receives', () => {
    const queues = resourcesOfType(synthesized.template, 'AWS::SQS::Queue');
    const byName = Object.fromEntries(
      Object.entries(queues).map(([id, queue]) => [queue.Properties?.QueueName, { id, queue }]),
    );
    const stepDlq = byName['Switchyard_switchyard-steps-dlq'];
    expect(stepDlq).toBeDefined();
    for (const name of FIXTURE_STEP_QUEUES) {
      expect(byName[`Switchyard_${name}`]?.queue.Properties).toEqual({
        QueueName: `Switchyard_${name}`,
        SqsManagedSseEnabled: true,
        VisibilityTimeout: 300,
        MessageRetentionPeriod: 4 * 24 * 3600,
        MaximumMessageSize: 1024 * 1024,
        Tags: [{ Key: 'switchyard:stack', Value: 'Switchyard' }],
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [stepDlq?.id, 'Arn'] }, maxReceiveCount: 5 },
      });
    }
    // signal steps and fan-out steps get no queue
    expect(Object.keys(byName).filter((name) => /approve|section-counts/.test(String(name)))).toEqual([]);
    const names = Object.keys(byName).sort();
    expect(names).toEqual(
      [
        ...FIXTURE_STEP_QUEUES,
        'switchyard-job-events-failed',
        'switchyard-steps-dlq',
        'switchyard-timers',
        'switchyard-timers-dlq',
        'switchyard-timers-failed',
        'workflow-manager',
        'workflow-manager-dlq',
      ]
        .map((name) => `Switchyard_${name}`)
        .sort(),
    );
    for (const queue of Object.values(queues)) expect(queue.Properties?.SqsManagedSseEnabled).toBe(true);
  });

  test('every queue refuses requests without TLS', () => {
    const queueIds = Object.keys(resourcesOfType(synthesized.template, 'AWS::SQS::Queue'));
    const policies = Object.values(resourcesOfType(synthesized.template, 'AWS::SQS::QueuePolicy'));
    const protectedIds = new Set<string>();
    for (const policy of policies) {
      const document = policy.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] };
      const denyInsecure = document.Statement.some(
        (statement) =>
          statement.Effect === 'Deny' &&
          JSON.stringify(statement.Condition) ===
            JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
      );
      if (!denyInsecure) continue;
      for (const queue of asList(policy.Properties?.Queues as { Ref: string }[])) protectedIds.add(queue.Ref);
    }
    expect([...protectedIds].sort()).toEqual([...queueIds].sort());
  });

  test('the reply queue triggers replies-sqs with partial batch failures, 10 per batch, a batching window', () => {
    const { stack, template } = synthesized;
    const replies = stack.node.findChild('RepliesFunction') as HandlerFunction;
    expect(replies.entry).toMatch(/functions\/handlers\/replies-sqs\.ts$/);
    const queues = resourcesOfType(template, 'AWS::SQS::Queue');
    const [replyQueueId, replyQueue] = Object.entries(queues).find(
      ([, queue]) => queue.Properties?.QueueName === 'Switchyard_workflow-manager',
    ) ?? ['', undefined];
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [replyQueueId, 'Arn'] },
      FunctionName: sqsMappingTarget(stack, replies),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const timeout = functionProperties(synthesized, 'RepliesFunction').Timeout as number;
    expect(replyQueue?.Properties?.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
    expect(replyQueue?.Properties?.RedrivePolicy).toMatchObject({ maxReceiveCount: 10 });
  });

  test('the timers function runs from the delayed timer queue and every minute', () => {
    const { stack, template } = synthesized;
    const timers = stack.node.findChild('TimersFunction') as HandlerFunction;
    const timersId = aliasIdOf(stack, timers);
    const [timerQueueId, timerQueue] = Object.entries(resourcesOfType(template, 'AWS::SQS::Queue')).find(
      ([, queue]) => queue.Properties?.QueueName === 'Switchyard_switchyard-timers',
    ) ?? ['', undefined];
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [timerQueueId, 'Arn'] },
      FunctionName: sqsMappingTarget(stack, timers),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    expect(timerQueue?.Properties?.VisibilityTimeout).toBeGreaterThanOrEqual(
      6 * (functionProperties(synthesized, 'TimersFunction').Timeout as number),
    );
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { Ref: timersId } })],
    });
  });

  test('without -c canaryDeployments every function still has its live alias, and nothing deploys through CodeDeploy', () => {
    const { stack, template } = synthesized;
    for (const fn of handlerFunctions(stack)) {
      const alias = resourcesOfType(template, 'AWS::Lambda::Alias')[aliasIdOf(stack, fn)];
      expect(alias?.Properties?.Name, fn.node.id).toBe('live');
      expect(alias?.UpdatePolicy, fn.node.id).toBeUndefined();
    }
    template.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', 0);
  });

  test('the step dead-letter queue triggers the dead-letters function', () => {
    const { stack, template } = synthesized;
    const [dlqId] = Object.entries(resourcesOfType(template, 'AWS::SQS::Queue')).find(
      ([, queue]) => queue.Properties?.QueueName === 'Switchyard_switchyard-steps-dlq',
    ) ?? [''];
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      FunctionName: sqsMappingTarget(stack, stack.node.findChild('DeadLettersFunction') as HandlerFunction),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
  });

  test('every function gets the environment contract of the SQS bus', () => {
    const expected = {
      TABLE_NAME: { Ref: Match.stringLikeRegexp('^StoreTable') },
      BUS: 'sqs',
      QUEUE_PREFIX: 'Switchyard_',
      REPLY_QUEUE: 'workflow-manager',
      REPLY_QUEUE_URL: { Ref: Match.stringLikeRegexp('^SqsBusReplies') },
      TIMER_QUEUE_URL: { Ref: Match.stringLikeRegexp('^TimerQueue[A-F0-9]{8}$') },
      DEAD_LETTER_QUEUE_URL: { Ref: Match.stringLikeRegexp('^SqsBusStepDeadLetters') },
      REPLY_DEAD_LETTER_QUEUE_URL: { Ref: Match.stringLikeRegexp('^SqsBusReplyDeadLetters') },
      STEP_QUEUE_DLQ_ARN: { 'Fn::GetAtt': [Match.stringLikeRegexp('^SqsBusStepDeadLetters'), 'Arn'] },
      STEP_QUEUE_VISIBILITY_TIMEOUT: '300',
      QUEUE_TAGS: '{"switchyard:stack":"Switchyard"}',
      LOG_LEVEL: 'INFO',
      POWERTOOLS_SERVICE_NAME: 'switchyard',
      POWERTOOLS_METRICS_NAMESPACE: 'Switchyard',
      MAX_BODY_BYTES: '262144',
      MAX_FAN_OUT: '100000',
      FAN_OUT_SLICE: '1000',
      RETENTION_DAYS: '30',
      MAX_MESSAGE_BYTES: '1048576',
      MAX_TREE_JOBS: '1000000',
      SCHEDULE_GROUP: 'Switchyard-workflows',
      SCHEDULE_ROLE_ARN: { 'Fn::GetAtt': [Match.stringLikeRegexp('^SchedulesInvokeRole'), 'Arn'] },
    };
    // The functions that register workflows create their schedules, which target the timers function.
    const registering = ['ApiFunction', 'RegisterWorkflowsFunction'];
    const target = { Ref: Match.stringLikeRegexp('^TimersFunctionLive') };
    // The queue removal reads no environment: it is told everything by its custom resource; the
    // job-events function reads only STACK_NAME (job-events.test.ts).
    const ids = handlerFunctions(synthesized.stack)
      .map((fn) => fn.node.id)
      .filter((id) => id !== 'RemoveQueuesFunction' && id !== 'JobEventsFunction');
    expect(ids.sort()).toEqual([
      'ApiFunction',
      'DeadLettersFunction',
      'RegisterWorkflowsFunction',
      'RepliesFunction',
      'TimersFunction',
    ]);
    for (const id of ids) {
      const environment = environmentOf(synthesized, id);
      expect(
        Match.objectEquals({
          ...expected,
          ...(registering.includes(id) ? { SCHEDULE_TARGET_ARN: target } : {}),
        }).test(environment).isSuccess,
        id,
      ).toBe(true);
    }
  });

  test('every function runs Node.js 22 on arm64, bundled as ESM, with its own log group', () => {
    expectNodeOnArm(synthesized);
    for (const fn of handlerFunctions(synthesized.stack)) {
      const properties = functionProperties(synthesized, fn.node.id);
      expect(properties.Handler).toBe('index.handler');
      expect(properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        LogGroup: { Ref: expect.stringMatching(/Logs[A-F0-9]{8}$/) },
      });
      // Only the API function has concurrency reserved (the others are capped by their event sources).
      expect(properties.ReservedConcurrentExecutions).toBe(fn.node.id === 'ApiFunction' ? 50 : undefined);
    }
    synthesized.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  test('IAM: no wildcard actions, and * or wildcard resources only where AWS offers nothing narrower', () => {
    expectLeastPrivilege(synthesized);
  });

  test('workflow schedules: a schedule group of the stack, and a role for Scheduler that only invokes the timers function', () => {
    const { template } = synthesized;
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'Switchyard-workflows' });
    // The deploy's registration creates schedules: only once the group and the role's policy exist.
    const [registration] = Object.values(template.findResources('Custom::SwitchyardWorkflows'));
    const dependsOn = asList(registration?.DependsOn as unknown[]).map(String);
    expect(dependsOn).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^SchedulesGroup/),
        expect.stringMatching(/^SchedulesInvokeRoleDefaultPolicy/),
      ]),
    );
    const [roleId, role] = Object.entries(resourcesOfType(template, 'AWS::IAM::Role')).find(([id]) =>
      id.startsWith('SchedulesInvokeRole'),
    ) ?? ['', undefined];
    expect(role?.Properties?.AssumeRolePolicyDocument).toMatchObject({
      Statement: [
        {
          Action: 'sts:AssumeRole',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ],
    });
    const statements = identityStatements(template);
    const invoking = statements.filter((statement) =>
      asList(statement.Action).includes('lambda:InvokeFunction'),
    );
    const byRole = invoking.filter((statement) =>
      statement.holder.startsWith(`${roleId.replace(/[A-F0-9]{8}$/, '')}DefaultPolicy`),
    );
    expect(byRole.map((statement) => asList(statement.Resource).map(renderValue))).toEqual([
      // The timers function's live alias (what new schedules target), and the function, which
      // schedules armed before the alias existed still name.
      [
        expect.stringMatching(/^<TimersFunction[A-Z0-9]+\.Arn>$/),
        expect.stringMatching(/^<TimersFunctionLive[A-Z0-9]+>$/),
      ],
    ]);
    // Who may write schedules, and pass the role: the registering functions; the timers function
    // re-arms, and creates a missing one (its repair sweep), but deletes none.
    const writers = (action: string) =>
      statements
        .filter((statement) => asList(statement.Action).includes(action))
        .map((statement) => statement.holder.replace(/Role.*$/, ''))
        .sort();
    expect(writers('scheduler:CreateSchedule')).toEqual([
      'ApiFunction',
      'RegisterWorkflowsFunction',
      'TimersFunction',
    ]);
    expect(writers('scheduler:DeleteSchedule')).toEqual(['ApiFunction', 'RegisterWorkflowsFunction']);
    expect(writers('scheduler:UpdateSchedule')).toEqual([
      'ApiFunction',
      'RegisterWorkflowsFunction',
      'TimersFunction',
    ]);
    for (const statement of statements.filter((s) => asList(s.Action).includes('scheduler:UpdateSchedule'))) {
      expect(asList(statement.Resource).map(renderValue)).toEqual([
        'arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Switchyard-workflows/*',
      ]);
    }
    const passing = statements.filter((statement) => asList(statement.Action).includes('iam:PassRole'));
    expect(passing.map((statement) => statement.holder.replace(/Role.*$/, '')).sort()).toEqual([
      'ApiFunction',
      'RegisterWorkflowsFunction',
      'TimersFunction',
    ]);
    for (const statement of passing) {
      expect(asList(statement.Resource).map(renderValue)).toEqual([
        expect.stringMatching(/^<SchedulesInvokeRole[A-Z0-9]+\.Arn>$/),
      ]);
      expect(statement).toMatchObject({
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      });
    }
  });

  test('only the API and registration functions may create queues, only under the stack prefix and tagged with the stack', () => {
    const statements = identityStatements(synthesized.template);
    const creators = statements.filter((statement) => asList(statement.Action).includes('sqs:CreateQueue'));
    expect(creators.map((creator) => creator.holder).sort()).toEqual([
      expect.stringMatching(/^ApiFunctionRole/),
      expect.stringMatching(/^RegisterWorkflowsFunctionRole/),
    ]);
    for (const creator of creators) {
      expect(asList(creator.Resource).map(renderValue)).toEqual([
        'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:Switchyard_*',
      ]);
      expect(asList(creator.Action).sort()).toEqual(['sqs:CreateQueue', 'sqs:TagQueue']);
      expect(creator).toMatchObject({
        Condition: { StringEquals: { 'aws:RequestTag/switchyard:stack': 'Switchyard' } },
      });
    }
    // Every other grant on the prefix holds only for queues tagged with this stack.
    const underPrefix = statements.filter((statement) =>
      asList(statement.Resource)
        .map(renderValue)
        .some((resource) => resource.endsWith(':Switchyard_*')),
    );
    for (const statement of underPrefix.filter((s) => !asList(s.Action).includes('sqs:CreateQueue'))) {
      expect(statement).toMatchObject({
        Condition: { StringEquals: { 'aws:ResourceTag/switchyard:stack': 'Switchyard' } },
      });
    }
    // No SetQueueAttributes anywhere: CreateQueue sets a new queue's attributes, and no existing
    // queue's policy or settings may be changed (the grant was dead, issue 31).
    expect(
      statements.filter((statement) => asList(statement.Action).includes('sqs:SetQueueAttributes')),
    ).toEqual([]);
    const queues = Object.values(resourcesOfType(synthesized.template, 'AWS::SQS::Queue'));
    for (const queue of queues) {
      expect(queue.Properties).toMatchObject({
        MaximumMessageSize: 1024 * 1024,
        Tags: [{ Key: 'switchyard:stack', Value: 'Switchyard' }],
      });
    }
  });

  test('the custom resource registers the fixture definitions, after the table exists', () => {
    const expected = loadWorkflows(readFileSync(FIXTURE_WORKFLOWS, 'utf8'), {
      file: FIXTURE_WORKFLOWS,
    }).workflows;
    const resources = Object.values(resourcesOfType(synthesized.template, REGISTRATION_RESOURCE_TYPE));
    expect(resources).toHaveLength(1);
    const definitions = JSON.parse(String(resources[0]?.Properties?.Definitions));
    expect(definitions).toEqual(expected);
    expect(definitions.map((workflow: { name: string }) => workflow.name)).toEqual([
      'book-word-counts',
      'quick-sum',
    ]);
    expect(resources[0]?.DependsOn?.some((id) => id.startsWith('StoreTable'))).toBe(true);
  });

  test('alarms on both dead-letter queues, the timer DLQ, every function and JobsFailed', () => {
    const alarms = Object.values(resourcesOfType(synthesized.template, 'AWS::CloudWatch::Alarm')).map(
      (alarm) => alarm.Properties ?? {},
    );
    const dlqAlarms = alarms.filter((alarm) => alarm.MetricName === 'ApproximateNumberOfMessagesVisible');
    // The reply, step and timer dead-letter queues, the timers function's and the job events' failure queues.
    expect(dlqAlarms).toHaveLength(5);
    expect(dlqAlarms.every((alarm) => alarm.Threshold === 1)).toBe(true);
    // API, replies, timers, dead letters, registration and job events.
    expect(
      alarms.filter((alarm) => alarm.MetricName === 'Errors' && alarm.Namespace === 'AWS/Lambda'),
    ).toHaveLength(6);
    expect(alarms).toContainEqual(
      expect.objectContaining({
        Namespace: 'Switchyard',
        MetricName: 'JobsFailed',
        Dimensions: [{ Name: 'service', Value: 'switchyard' }],
        Threshold: 1,
      }),
    );
  });

  test('every alarm notifies the alarm topic, but failed jobs the business topic; queue ages, throttles, DynamoDB throttling; a dashboard', () => {
    const { template } = synthesized;
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map(
      (alarm) => alarm.Properties ?? {},
    );
    const topics = Object.keys(resourcesOfType(template, 'AWS::SNS::Topic'));
    const paging = topics.find((id) => id.startsWith('MonitoringAlarmTopic'));
    const business = topics.find((id) => id.startsWith('MonitoringBusinessTopic'));
    for (const alarm of alarms) {
      const topicId = alarm.MetricName === 'JobsFailed' ? business : paging;
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
    }
    expect(alarms.filter((alarm) => alarm.MetricName === 'JobsFailed')).toHaveLength(1);
    const ages = alarms.filter((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage');
    expect(ages.map((alarm) => alarm.Threshold).sort((a, b) => Number(a) - Number(b))).toEqual([
      300,
      900,
      1200,
      3 * 24 * 3600,
      3 * 24 * 3600,
    ]);
    expect(alarms.filter((alarm) => alarm.MetricName === 'Throttles')).toHaveLength(6);
    for (const metric of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      expect(alarms).toContainEqual(
        expect.objectContaining({ Namespace: 'AWS/DynamoDB', MetricName: metric }),
      );
    }
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    for (const metric of [
      'JobsStarted',
      'JobsCompleted',
      'JobsFailed',
      'StepDuration',
      'ApproximateAgeOfOldestMessage',
      'Errors',
      'Throttles',
    ]) {
      expect(body).toContain(metric);
    }
  });

  test('outputs: API URL and key, queues, table', () => {
    const outputs = synthesized.template.findOutputs('*');
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'AlarmTopicArn',
        'ApiKeyId',
        'ApiUrl',
        'BusinessAlarmTopicArn',
        'DashboardName',
        'QueuePrefix',
        'ReplyQueueUrl',
        'StepDeadLetterQueueUrl',
        'StepQueueUrls',
        'TableName',
        'TimerQueueUrl',
      ].sort(),
    );
    const stepQueueUrls = renderValue(outputs.StepQueueUrls?.Value);
    for (const name of FIXTURE_STEP_QUEUES)
      expect(stepQueueUrls).toContain(`"${name}":"<SqsBusStep${name.replace(/-/g, '')}`);
  });

  test('cdk-nag AWS Solutions: nothing unacknowledged, and every acknowledgment gives its reason', () => {
    expectNagClean(synthesized);
  });
});

describe('SwitchyardStack with the RabbitMQ bus (-c bus=rabbitmq)', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({ bus: 'rabbitmq' });
  });

  test('a private single-instance RabbitMQ broker with general logs, its password a secret reference', () => {
    const brokers = Object.values(resourcesOfType(synthesized.template, 'AWS::AmazonMQ::Broker'));
    expect(brokers).toHaveLength(1);
    const broker = brokers[0]?.Properties ?? {};
    expect(broker).toMatchObject({
      EngineType: 'RABBITMQ',
      EngineVersion: '3.13',
      HostInstanceType: 'mq.t3.micro',
      DeploymentMode: 'SINGLE_INSTANCE',
      PubliclyAccessible: false,
      AutoMinorVersionUpgrade: true,
      Logs: { General: true },
    });
    expect(broker.SubnetIds).toHaveLength(1);
    const [user] = broker.Users as { Username: string; Password: unknown }[];
    expect(user?.Username).toBe('switchyard');
    expect(renderValue(user?.Password)).toMatch(
      /^\{\{resolve:secretsmanager:<RabbitMqBusCredentials[A-Z0-9]+>:SecretString:password::\}\}$/,
    );
    synthesized.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({
        SecretStringTemplate: '{"username":"switchyard"}',
        GenerateStringKey: 'password',
      }),
    });
  });

  test('replies-mq is triggered by an event source mapping on workflow-manager, logging in with the secret', () => {
    const { stack, template } = synthesized;
    const replies = stack.node.findChild('RepliesFunction') as HandlerFunction;
    expect(replies.entry).toMatch(/functions\/handlers\/replies-mq\.ts$/);
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).map(
      (m) => m.Properties ?? {},
    );
    const fromBroker = mappings.filter((mapping) =>
      renderValue(mapping.EventSourceArn).startsWith('<RabbitMqBusBroker'),
    );
    expect(fromBroker.map((mapping) => mapping.Queues)).toEqual([
      ['workflow-manager'],
      ['workflow-manager.parked'],
    ]);
    expect(fromBroker[1]).toMatchObject({
      FunctionName: { Ref: aliasIdOf(stack, replies) },
      BatchSize: 10,
    });
    expect(fromBroker[0]).toMatchObject({
      FunctionName: { Ref: aliasIdOf(stack, replies) },
      Queues: ['workflow-manager'],
      SourceAccessConfigurations: [
        { Type: 'BASIC_AUTH', URI: { Ref: expect.stringMatching(/^RabbitMqBusCredentials/) } },
        { Type: 'VIRTUAL_HOST', URI: '/' },
      ],
    });
    expect(fromBroker[0]?.FunctionResponseTypes).toBeUndefined();
    const replyStatements = identityStatements(template).filter((statement) =>
      statement.holder.startsWith('RepliesFunction'),
    );
    const actions = replyStatements.flatMap((statement) => asList(statement.Action));
    for (const needed of [
      'mq:DescribeBroker',
      'secretsmanager:GetSecretValue',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeVpcs',
    ]) {
      expect(actions).toContain(needed);
    }
  });

  test('a VPC of two isolated subnets with endpoints and no NAT; the broker reachable on 5671 from the functions only', () => {
    const { template } = synthesized;
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.resourceCountIs('AWS::EC2::InternetGateway', 0);
    template.resourceCountIs('AWS::EC2::Subnet', 2);
    const endpoints = Object.values(resourcesOfType(template, 'AWS::EC2::VPCEndpoint')).map((endpoint) =>
      renderValue(endpoint.Properties?.ServiceName),
    );
    expect(endpoints.map((name) => name.split('.').pop()).sort()).toEqual([
      'dynamodb',
      'lambda',
      'scheduler',
      'secretsmanager',
      'sqs',
    ]);
    const ingress = Object.values(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')).map(
      (rule) => rule.Properties ?? {},
    );
    const toBroker = ingress.filter((rule) =>
      renderValue(rule.GroupId).startsWith('<RabbitMqBusBrokerSecurityGroup'),
    );
    expect(
      toBroker.map((rule) => [
        rule.FromPort,
        rule.ToPort,
        renderValue(rule.SourceSecurityGroupId).replace(/[A-Z0-9]{8}\.GroupId>$/, ''),
      ]),
    ).toEqual(
      expect.arrayContaining([
        [5671, 5671, '<RabbitMqBusClientSecurityGroup'],
        [5671, 5671, '<RabbitMqBusBrokerSecurityGroup'],
      ]),
    );
    expect(toBroker).toHaveLength(2);
    for (const id of ['ApiFunction', 'RepliesFunction', 'TimersFunction']) {
      const vpcConfig = functionProperties(synthesized, id).VpcConfig as { SecurityGroupIds: unknown[] };
      expect(vpcConfig.SecurityGroupIds.map(renderValue)).toEqual([
        expect.stringMatching(/^<RabbitMqBusClientSecurityGroup/),
      ]);
    }
    template.resourceCountIs('AWS::EC2::FlowLog', 1);
  });

  test('no SQS bus queues: only the timer queue, its dead-letter queue and the failure queues', () => {
    const names = Object.values(resourcesOfType(synthesized.template, 'AWS::SQS::Queue')).map(
      (queue) => queue.Properties?.QueueName,
    );
    expect(names.sort()).toEqual([
      'Switchyard_switchyard-job-events-failed',
      'Switchyard_switchyard-timers',
      'Switchyard_switchyard-timers-dlq',
      'Switchyard_switchyard-timers-failed',
    ]);
    expect(handlerFunctions(synthesized.stack).map((fn) => fn.node.id)).not.toContain('DeadLettersFunction');
  });

  test('the environment contract of the RabbitMQ bus', () => {
    for (const fn of handlerFunctions(synthesized.stack).filter((f) => f.node.id !== 'JobEventsFunction')) {
      const environment = environmentOf(synthesized, fn.node.id);
      expect(environment).toMatchObject({
        BUS: 'rabbitmq',
        REPLY_QUEUE: 'workflow-manager',
        // One reply queue (one Amazon MQ mapping) unless -c mqReplyQueues (the production profile: 4).
        REPLY_QUEUES: '1',
        MQ_SECRET_ARN: { Ref: expect.stringMatching(/^RabbitMqBusCredentials/) },
        TIMER_QUEUE_URL: { Ref: expect.stringMatching(/^TimerQueue[A-F0-9]{8}$/) },
      });
      expect(renderValue(environment.MQ_AMQPS_ENDPOINT)).not.toBe('');
      expect(environment.MQ_AMQPS_ENDPOINT).toEqual({
        'Fn::Select': [0, { 'Fn::GetAtt': [expect.stringMatching(/^RabbitMqBusBroker/), 'AmqpEndpoints'] }],
      });
      for (const sqsOnly of [
        'REPLY_QUEUE_URL',
        'DEAD_LETTER_QUEUE_URL',
        'REPLY_DEAD_LETTER_QUEUE_URL',
        'STEP_QUEUE_DLQ_ARN',
      ])
        expect(environment[sqsOnly]).toBeUndefined();
    }
  });

  test('Node.js 22 on arm64 everywhere, least privilege, cdk-nag clean', () => {
    expectNodeOnArm(synthesized);
    expectLeastPrivilege(synthesized);
    expectNagClean(synthesized);
    const outputs = Object.keys(synthesized.template.findOutputs('*'));
    expect(outputs).toEqual(
      expect.arrayContaining([
        'BrokerAmqpsEndpoint',
        'BrokerSecretArn',
        'BrokerClientSecurityGroupId',
        'VpcId',
      ]),
    );
    expect(outputs).not.toContain('ReplyQueueUrl');
  });

  test('-c brokerDeploymentMode=CLUSTER_MULTI_AZ spreads a larger broker over both subnets', () => {
    const cluster = synthStack({ bus: 'rabbitmq', brokerDeploymentMode: 'CLUSTER_MULTI_AZ' });
    cluster.template.hasResourceProperties('AWS::AmazonMQ::Broker', {
      DeploymentMode: 'CLUSTER_MULTI_AZ',
      HostInstanceType: 'mq.m7g.large',
      SubnetIds: [Match.anyValue(), Match.anyValue()],
    });
    expect(unacknowledgedFindings(cluster)).toEqual([]);
  });
});

describe('SwitchyardStack with IAM authorization (-c auth=iam)', CDK, () => {
  test('the credentialed routes use IAM; no API key, no usage plan; cdk-nag clean', () => {
    const synthesized = synthStack({ auth: 'iam' });
    const routes = methodsByRoute(synthesized.template);
    expect(routes['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'AWS_IAM' });
    expect(routes['ANY /{proxy+}']?.ApiKeyRequired).toBeUndefined();
    expect(routes['GET /']).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
    synthesized.template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    synthesized.template.resourceCountIs('AWS::ApiGateway::UsagePlan', 0);
    expect(Object.keys(synthesized.template.findOutputs('*'))).not.toContain('ApiKeyId');
    synthesized.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 50 })]),
    });
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });
});

describe('SwitchyardStack context', CDK, () => {
  test('-c destroy=true makes the table and log groups go with the stack', () => {
    const { template } = synthStack({ destroy: 'true' });
    const [table] = Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'));
    expect(table).toMatchObject({ DeletionPolicy: 'Delete' });
    expect(table?.Properties?.DeletionProtectionEnabled).toBe(false);
    for (const group of Object.values(resourcesOfType(template, 'AWS::Logs::LogGroup'))) {
      expect(group.DeletionPolicy).toBe('Delete');
    }
  });

  test('-c stepVisibilityTimeout and -c queuePrefix shape the step queues and what the API function creates', () => {
    const synthesized = synthStack({ stepVisibilityTimeout: '15m', queuePrefix: 'wm_' });
    synthesized.template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'wm_summing',
      VisibilityTimeout: 900,
    });
    expect(environmentOf(synthesized, 'ApiFunction')).toMatchObject({
      STEP_QUEUE_VISIBILITY_TIMEOUT: '900',
      QUEUE_PREFIX: 'wm_',
    });
    expectLeastPrivilege(synthesized);
  });

  test('-c notify… gives every handler the webhook settings (docs/notifications.md)', () => {
    const synthesized = synthStack({
      notifyUrl: 'https://hooks.example.com/switchyard',
      notifySecret: 'HOOK_KEY',
      notifyEvents: 'job.failed,job.aborted',
      notifyAllowHosts: 'hooks.example.com',
    });
    for (const id of ['ApiFunction', 'RepliesFunction', 'TimersFunction', 'DeadLettersFunction']) {
      const environment = environmentOf(synthesized, id);
      expect(environment, id).toMatchObject({
        NOTIFY_URL: 'https://hooks.example.com/switchyard',
        NOTIFY_SECRET: 'HOOK_KEY',
        NOTIFY_EVENTS: 'job.failed,job.aborted',
        NOTIFY_ALLOW_HOSTS: 'hooks.example.com',
      });
      // https only unless -c notifyHttpsOnly=false.
      expect(environment.NOTIFY_HTTPS_ONLY, id).toBeUndefined();
    }
  });

  test('-c tracing=true turns on X-Ray for the functions and the stage, still cdk-nag clean', () => {
    const synthesized = synthStack({ tracing: 'true' });
    for (const fn of handlerFunctions(synthesized.stack)) {
      expect(functionProperties(synthesized, fn.node.id).TracingConfig).toEqual({ Mode: 'Active' });
    }
    synthesized.template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    expectLeastPrivilege(synthesized);
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });

  test('a missing default workflows file deploys no step queues and registers nothing', () => {
    const synthesized = synthStack({
      workflows: '',
      defaultWorkflows: 'test/infra/fixtures/does-not-exist.yaml',
    });
    synthesized.template.resourceCountIs(REGISTRATION_RESOURCE_TYPE, 0);
    const names = Object.values(resourcesOfType(synthesized.template, 'AWS::SQS::Queue')).map(
      (queue) => queue.Properties?.QueueName,
    );
    // The manager's own: reply, its DLQ, step DLQ, timers, its DLQ, its failure queue and the job events'.
    expect(names).toHaveLength(7);
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });

  test('a missing explicit workflows file, or an invalid one, stops the synth with a clear message', () => {
    expect(() => synthStack({ workflows: 'test/infra/fixtures/does-not-exist.yaml' })).toThrow(
      /-c workflows=test\/infra\/fixtures\/does-not-exist\.yaml: no such file/,
    );
    expect(() => synthStack({ workflows: 'test/infra/fixtures/invalid-workflows.yaml' })).toThrow(
      /invalid-workflows\.yaml are not valid:\n.*missing-step/,
    );
  });

  test('unknown context values stop the synth and name the key', () => {
    expect(() => synthStack({ bus: 'kafka' })).toThrow(/-c bus=kafka: expected one of sqs, rabbitmq/);
    expect(() => synthStack({ auth: 'none' })).toThrow(/-c auth=none: expected one of apiKey, iam/);
  });

  test('-c alarmEmail subscribes the address to the alarm topic; a wrong address stops the synth', () => {
    const { template } = synthStack({ alarmEmail: 'oncall@example.com' });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    expect(() => synthStack({ alarmEmail: 'nobody' })).toThrow(
      /-c alarmEmail=nobody: expected an email address/,
    );
  });

  test('-c repliesMaxConcurrency, timersMaxConcurrency, deadLettersMaxConcurrency and apiReservedConcurrency', () => {
    const synthesized = synthStack({
      repliesMaxConcurrency: '20',
      timersMaxConcurrency: '3',
      deadLettersMaxConcurrency: '4',
      apiReservedConcurrency: '0',
    });
    const concurrency = Object.values(
      resourcesOfType(synthesized.template, 'AWS::Lambda::EventSourceMapping'),
    )
      .map(
        (mapping) =>
          (mapping.Properties?.ScalingConfig as { MaximumConcurrency?: number } | undefined)
            ?.MaximumConcurrency,
      )
      .filter((maximum) => maximum !== undefined)
      .sort((a, b) => Number(a) - Number(b));
    // The SQS event sources' (the job events' stream mapping has no maximum concurrency).
    expect(concurrency).toEqual([3, 4, 20]);
    expect(functionProperties(synthesized, 'ApiFunction').ReservedConcurrentExecutions).toBeUndefined();
    expect(() => synthStack({ repliesMaxConcurrency: '1' })).toThrow(
      /repliesMaxConcurrency=1: expected a whole number from 2/,
    );
  });

  test('-c apiDailyQuota gives the usage plan a daily quota', () => {
    const { template } = synthStack({ apiDailyQuota: '500000' });
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Quota: { Limit: 500_000, Period: 'DAY' },
    });
  });

  test('-c waf=true puts a web ACL with AWS managed rules and a rate rule on the stage, cdk-nag clean', () => {
    const synthesized = synthStack({ waf: 'true', wafRateLimit: '500' });
    const { template } = synthesized;
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: Match.arrayWith([
        Match.objectLike({
          Name: 'RatePerAddress',
          Action: { Block: {} },
          Statement: { RateBasedStatement: Match.objectLike({ Limit: 500, AggregateKeyType: 'IP' }) },
        }),
        Match.objectLike({
          Name: 'AWSManagedRulesCommonRuleSet',
          Statement: {
            ManagedRuleGroupStatement: Match.objectLike({
              RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
            }),
          },
        }),
      ]),
    });
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
    expect(acknowledgments(synthesized.app).map((entry) => entry.id)).not.toContain('AwsSolutions-APIG3');
    synthStack({}).template.resourceCountIs('AWS::WAFv2::WebACL', 0);
  });

  test('-c auth=cognito protects the credentialed routes with a Cognito JWT authorizer, cdk-nag clean', () => {
    const arn = 'arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_AbCdEf123';
    const synthesized = synthStack({ auth: 'cognito', cognitoUserPoolArn: arn });
    const routes = methodsByRoute(synthesized.template);
    expect(routes['ANY /{proxy+}']).toMatchObject({ AuthorizationType: 'COGNITO_USER_POOLS' });
    synthesized.template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'COGNITO_USER_POOLS',
      ProviderARNs: [arn],
      IdentitySource: 'method.request.header.Authorization',
    });
    synthesized.template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
    expect(() => synthStack({ auth: 'cognito' })).toThrow(/-c auth=cognito needs -c cognitoUserPoolArn/);
  });

  test('-c bus=rabbitmq: alarms on the reply queue depth, its consumers (the mapping), parked replies and a poisoned one, as the manager measures them', () => {
    const { template } = synthStack({ bus: 'rabbitmq' });
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties ?? {},
    );
    // Amazon MQ for RabbitMQ 4 publishes no per-queue metric: none of AWS/AmazonMQ's is a queue's.
    const amazonMqQueueAlarms = alarms.filter(
      (alarm) =>
        alarm.Namespace === 'AWS/AmazonMQ' &&
        (alarm.Dimensions as { Name: string }[] | undefined)?.some((d) => d.Name === 'Queue'),
    );
    expect(amazonMqQueueAlarms).toEqual([]);
    const queues = alarms.filter(
      (alarm) => alarm.Namespace === 'Switchyard' && String(alarm.MetricName).startsWith('Queue'),
    );
    expect(queues.map((alarm) => [alarm.MetricName, alarm.ComparisonOperator, alarm.Threshold])).toEqual([
      ['QueueDepth', 'GreaterThanOrEqualToThreshold', 1000],
      ['QueueConsumers', 'LessThanThreshold', 1],
      ['QueueDepth', 'GreaterThanOrEqualToThreshold', 1],
      ['QueueDepth', 'GreaterThanOrEqualToThreshold', 1],
    ]);
    expect(
      queues.map(
        (alarm) =>
          (alarm.Dimensions as { Name: string; Value: string }[]).find((d) => d.Name === 'Queue')?.Value,
      ),
    ).toEqual([
      'workflow-manager',
      'workflow-manager',
      'workflow-manager.parked',
      'workflow-manager.poisoned',
    ]);
    expect(alarms.filter((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage')).toHaveLength(2);
  });
});
