import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { HandlerFunction } from '../../infra/constructs/handler-function.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import {
  asList,
  identityStatements,
  type PolicyStatement,
  renderValue,
  resourcesOfType,
} from './template-queries.js';

/**
 * Least privilege, checked statement by statement against what each function's code calls.
 *
 * The code side: each handler is bundled as the stack bundles it; every AWS SDK command constructed
 * (`new XCommand(`) in the repository files of the bundle is an action that function may need. The
 * bundle is an upper bound (a function carries the whole store, say, even where it uses part of it),
 * so the check is one way: nothing may be granted that no code of the function can call.
 *
 * The mapping from SDK commands to IAM actions (the AWS Service Authorization Reference):
 */
const COMMAND_ACTIONS: Record<string, string[]> = {
  GetItemCommand: ['dynamodb:GetItem'],
  PutItemCommand: ['dynamodb:PutItem'],
  UpdateItemCommand: ['dynamodb:UpdateItem'],
  DeleteItemCommand: ['dynamodb:DeleteItem'],
  QueryCommand: ['dynamodb:Query'],
  BatchGetItemCommand: ['dynamodb:BatchGetItem'],
  BatchWriteItemCommand: ['dynamodb:BatchWriteItem'],
  // There is no dynamodb:TransactWriteItems action: a transaction needs the actions of its items.
  TransactWriteItemsCommand: [
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ],
  SendMessageCommand: ['sqs:SendMessage'],
  PutObjectCommand: ['s3:PutObject'],
  // The CLI's reader of the deployed archive (no function calls them).
  ListObjectsV2Command: ['s3:ListBucket'],
  GetObjectCommand: ['s3:GetObject'],
  SendMessageBatchCommand: ['sqs:SendMessage'],
  GetQueueUrlCommand: ['sqs:GetQueueUrl'],
  GetQueueAttributesCommand: ['sqs:GetQueueAttributes'],
  // The queue is created with attributes (its TLS-only policy among them) and the stack's tag
  // (functions/aws/sqs-bus-factory.ts adds it), hence sqs:TagQueue.
  CreateQueueCommand: ['sqs:CreateQueue', 'sqs:TagQueue'],
  ListQueuesCommand: ['sqs:ListQueues'],
  ListQueueTagsCommand: ['sqs:ListQueueTags'],
  DeleteQueueCommand: ['sqs:DeleteQueue'],
  ReceiveMessageCommand: ['sqs:ReceiveMessage'],
  DeleteMessageCommand: ['sqs:DeleteMessage'],
  ChangeMessageVisibilityCommand: ['sqs:ChangeMessageVisibility'],
  GetSecretValueCommand: ['secretsmanager:GetSecretValue'],
  // A schedule is written with the role EventBridge Scheduler invokes its target with: iam:PassRole.
  GetScheduleCommand: ['scheduler:GetSchedule'],
  CreateScheduleCommand: ['scheduler:CreateSchedule', 'iam:PassRole'],
  UpdateScheduleCommand: ['scheduler:UpdateSchedule', 'iam:PassRole'],
  DeleteScheduleCommand: ['scheduler:DeleteSchedule'],
  PutEventsCommand: ['events:PutEvents'],
};

/** Names that look like actions but are not IAM actions: granting them grants nothing. */
const NOT_IAM_ACTIONS: Record<string, string> = {
  'dynamodb:TransactWriteItems':
    'is not an IAM action (a transaction is authorised by the PutItem, UpdateItem, DeleteItem and ConditionCheckItem of its items)',
  'dynamodb:TransactGetItems':
    'is not an IAM action (a transaction is authorised by the GetItem of its items)',
};

/**
 * What a function's role needs that its code does not call: Lambda itself uses these with the role.
 * `trigger`: the queue whose event source mapping polls it; `vpc`: functions placed in the VPC.
 */
const PLATFORM_ACTIONS = {
  logs: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  sqsTrigger: [
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:ChangeMessageVisibility',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
  ],
  streamTrigger: [
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
    'dynamodb:ListStreams',
  ],
  vpc: [
    'ec2:DescribeNetworkInterfaces',
    'ec2:DescribeSubnets',
    'ec2:CreateNetworkInterface',
    'ec2:DeleteNetworkInterface',
    'ec2:AssignPrivateIpAddresses',
    'ec2:UnassignPrivateIpAddresses',
  ],
  // The Amazon MQ event source mapping reads the broker, its network and its secret with the function's role.
  mqTrigger: [
    'mq:DescribeBroker',
    'ec2:DescribeSecurityGroups',
    'ec2:DescribeVpcs',
    'secretsmanager:GetSecretValue',
  ],
  tracing: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
};

/** Roles that are not a handler's: what each may hold, exactly. */
const INFRASTRUCTURE_ROLES: { holder: RegExp; actions: string[]; resource: RegExp }[] = [
  // The custom resource provider (CDK's framework function) invokes the registration function's live alias.
  {
    holder: /^WorkflowRegistrationProviderRoleDefaultPolicy/,
    actions: ['lambda:InvokeFunction', 'lambda:GetFunction'],
    resource: /^(<RegisterWorkflowsFunction[A-Z0-9]+\.Arn>(:\*)?|<RegisterWorkflowsFunctionLive[A-Z0-9]+>)$/,
  },
  {
    holder: /^WorkflowRegistrationProviderRole[A-Z0-9]+$/,
    actions: PLATFORM_ACTIONS.logs,
    resource: /^<WorkflowRegistrationProviderLogs[A-Z0-9]+\.Arn>$/,
  },
  // The provider of the run-time queue removal invokes its function.
  {
    holder: /^RunTimeQueueRemovalProviderRoleDefaultPolicy/,
    actions: ['lambda:InvokeFunction', 'lambda:GetFunction'],
    resource: /^(<RemoveQueuesFunction[A-Z0-9]+\.Arn>(:\*)?|<RemoveQueuesFunctionLive[A-Z0-9]+>)$/,
  },
  {
    holder: /^RunTimeQueueRemovalProviderRole[A-Z0-9]+$/,
    actions: PLATFORM_ACTIONS.logs,
    resource: /^<RunTimeQueueRemovalProviderLogs[A-Z0-9]+\.Arn>$/,
  },
  // EventBridge Scheduler invokes the timers function at workflow schedule ticks.
  {
    holder: /^SchedulesInvokeRoleDefaultPolicy/,
    actions: ['lambda:InvokeFunction'],
    // Its live alias, which the schedules target (and the function, which older schedules name).
    resource: /^<TimersFunction(Live[A-Z0-9]+|[A-Z0-9]+\.Arn)>$/,
  },
  // VPC flow logs write to their own log group.
  {
    holder: /^RabbitMqBusVpcFlowLogIAMRole/,
    actions: ['logs:CreateLogStream', 'logs:DescribeLogStreams', 'logs:PutLogEvents'],
    resource: /^<RabbitMqBusFlowLogs[A-Z0-9]+\.Arn>$/,
  },
];

interface Variant {
  name: string;
  context: Record<string, string>;
}
const VARIANTS: Variant[] = [
  { name: 'SQS bus', context: {} },
  { name: 'RabbitMQ bus', context: { bus: 'rabbitmq' } },
  { name: 'token authorizer', context: { auth: 'token' } },
  { name: 'params secrets', context: { secretsPrefix: 'switchyard/' } },
  { name: 'archive', context: { archive: 'true' } },
];

/** The repository files esbuild puts in a handler's bundle, and the bundle's text. */
async function bundleOf(entry: string): Promise<{ files: string[]; text: string }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return {
    files: Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules')),
    text: result.outputFiles[0]?.text ?? '',
  };
}

/** IAM actions the code of a bundle can call. */
function codeActions(files: string[]): Set<string> {
  const actions = new Set<string>();
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(/new ([A-Z][A-Za-z]+Command)\(/g)) {
      const command = match[1] as string;
      const mapped = COMMAND_ACTIONS[command];
      if (!mapped) throw new Error(`${file} calls ${command}: add it to COMMAND_ACTIONS`);
      for (const action of mapped) actions.add(action);
    }
  }
  return actions;
}

interface FunctionFacts {
  id: string;
  handler: string;
  code: Set<string>;
  bundleText: string;
}

function handlerFunctions(synthesized: SynthesizedStack): HandlerFunction[] {
  return synthesized.stack.node.children.filter(
    (child): child is HandlerFunction => child instanceof HandlerFunction,
  );
}

/** The handler function a policy statement belongs to, by its holder's logical id. */
function ownerOf(statement: PolicyStatement, functions: FunctionFacts[]): FunctionFacts | undefined {
  return functions.find((fn) =>
    new RegExp(`^${fn.id}(Role|NetworkInterfaces|DescribeBrokerNetwork|ListQueues)`).test(statement.holder),
  );
}

describe.each(VARIANTS)('IAM least privilege, statement by statement ($name)', ({ name, context }) => {
  let synthesized: SynthesizedStack;
  let functions: FunctionFacts[];
  beforeAll(async () => {
    synthesized = synthStack(context);
    functions = [];
    for (const fn of handlerFunctions(synthesized)) {
      const { files, text } = await bundleOf(fn.entry);
      functions.push({
        id: fn.node.id,
        handler: fn.entry.replace(/^.*\/functions\/handlers\//, ''),
        code: codeActions(files),
        bundleText: text,
      });
    }
  }, 120_000);

  test('every statement of a handler role grants only what its code calls, or what Lambda needs for it', () => {
    const problems: string[] = [];
    const table: string[] = [];
    for (const statement of identityStatements(synthesized.template)) {
      if (statement.Effect !== 'Allow') continue;
      const actions = asList(statement.Action);
      const resources = asList(statement.Resource).map(renderValue);
      const infrastructure = INFRASTRUCTURE_ROLES.find((role) => role.holder.test(statement.holder));
      if (infrastructure) {
        for (const action of actions)
          if (!infrastructure.actions.includes(action))
            problems.push(`${statement.holder}: ${action} is not expected`);
        for (const resource of resources)
          if (!infrastructure.resource.test(resource))
            problems.push(`${statement.holder}: resource ${resource}`);
        continue;
      }
      const fn = ownerOf(statement, functions);
      if (!fn) {
        problems.push(`${statement.holder}: a role of no known function (${actions.join(', ')})`);
        continue;
      }
      for (const action of actions) {
        const why = justify(fn, action, resources, name);
        if (why) table.push(`${fn.id} ${action} on ${resources.join(' ')}: ${why}`);
        else if (NOT_IAM_ACTIONS[action])
          problems.push(`${fn.id} (${fn.handler}): ${action} ${NOT_IAM_ACTIONS[action]}`);
        else
          problems.push(
            `${fn.id} (${fn.handler}): ${action} on ${resources.join(', ')} is granted, but no code of the function calls it`,
          );
      }
    }
    expect(problems, `grants beyond what the code calls:\n${problems.join('\n')}`).toEqual([]);
    expect(table.length).toBeGreaterThan(0);
  });

  test('every action a manager function needs for its store, bus and secret is granted', () => {
    const granted = new Map<string, Set<string>>();
    for (const statement of identityStatements(synthesized.template)) {
      const fn = ownerOf(statement, functions);
      if (!fn) continue;
      const set = granted.get(fn.id) ?? new Set<string>();
      for (const action of asList(statement.Action)) set.add(action);
      granted.set(fn.id, set);
    }
    const needed = [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:Query',
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'sqs:SendMessage',
      ...(name === 'RabbitMQ bus' ? ['secretsmanager:GetSecretValue'] : []),
    ];
    const managers = functions.filter(
      (f) =>
        ![
          'RegisterWorkflowsFunction',
          'RemoveQueuesFunction',
          'ApiAuthorizerFunction',
          'JobEventsFunction',
          'ArchiveFunction',
        ].includes(f.id),
    );
    expect(managers.length).toBeGreaterThanOrEqual(3);
    for (const fn of managers) {
      for (const action of needed)
        expect(granted.get(fn.id)?.has(action), `${fn.id} lacks ${action}`).toBe(true);
    }
    // The authorizer (-c auth=token) reads token items and the root secret: exactly that.
    const authorizer = granted.get('ApiAuthorizerFunction');
    if (name === 'token authorizer')
      expect([...(authorizer ?? [])].sort()).toEqual([
        'dynamodb:GetItem',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'secretsmanager:GetSecretValue',
      ]);
    else expect(authorizer).toBeUndefined();
  });

  test('no Lambda bundle carries a credential: no default broker password, no access key, no private key', () => {
    for (const fn of functions) {
      expect(fn.bundleText, fn.handler).not.toMatch(/guest:guest/);
      expect(fn.bundleText, fn.handler).not.toMatch(/\bAKIA[0-9A-Z]{16}\b/);
      expect(fn.bundleText, fn.handler).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----/);
      expect(fn.bundleText, fn.handler).not.toMatch(/amqps?:\/\/[^/\s"'`:@]+:[^/\s"'`@$]+@/);
    }
  });

  test('the template holds no secret: the broker password is a dynamic reference, no credential literal anywhere', () => {
    const text = JSON.stringify(synthesized.template.toJSON());
    expect(text).not.toMatch(/guest:guest/);
    expect(text).not.toMatch(/\bAKIA[0-9A-Z]{16}\b/);
    expect(text).not.toMatch(/amqps?:\/\/[^/\s"'`:@]+:[^/\s"'`@]+@/);
    const literalSecrets: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, `${path}[${i}]`);
      } else if (value && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) {
          const sensitive = /password|secret(?!s?manager|arn|string)|token|apikey|credential/i.test(key);
          if (sensitive && typeof child === 'string' && !/^\{\{resolve:/.test(child))
            literalSecrets.push(`${path}.${key}`);
          walk(child, `${path}.${key}`);
        }
      }
    };
    walk(synthesized.template.toJSON(), '');
    expect(literalSecrets).toEqual([]);
    for (const broker of Object.values(resourcesOfType(synthesized.template, 'AWS::AmazonMQ::Broker'))) {
      for (const user of (broker.Properties?.Users ?? []) as { Password: unknown }[])
        expect(renderValue(user.Password)).toMatch(
          /^\{\{resolve:secretsmanager:.+:SecretString:password::\}\}$/,
        );
    }
    for (const key of Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGateway::ApiKey')))
      expect(key.Properties?.Value, 'the API key is generated, not written in the template').toBeUndefined();
  });

  test('nothing reaches the API function but API Gateway: no function URL, invoke permissions scoped to this API', () => {
    synthesized.template.resourceCountIs('AWS::Lambda::Url', 0);
    const apiFunction = synthesized.stack.node.findChild('ApiFunction') as HandlerFunction;
    // API Gateway invokes the live alias: the permissions are the alias's (and none the function's).
    const ids = [apiFunction.function, apiFunction.alias].map((construct) =>
      synthesized.stack.getLogicalId(construct.node.defaultChild as never),
    );
    const permissions = Object.values(
      resourcesOfType(synthesized.template, 'AWS::Lambda::Permission'),
    ).filter((permission) => ids.some((id) => renderValue(permission.Properties?.FunctionName).includes(id)));
    expect(permissions.length).toBeGreaterThan(0);
    for (const permission of permissions) {
      expect(permission.Properties?.Principal).toBe('apigateway.amazonaws.com');
      expect(renderValue(permission.Properties?.SourceArn)).toMatch(
        /^arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<Api[A-Za-z0-9]+>\//,
      );
    }
  });

  test('every API route needs credentials except the dashboard page, its assets and the API description', () => {
    const methods = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGateway::Method')).map(
      (m) => m.Properties ?? {},
    );
    const credentialed = (method: Record<string, unknown>): boolean =>
      method.ApiKeyRequired === true ||
      method.AuthorizationType === 'AWS_IAM' ||
      (method.AuthorizationType === 'CUSTOM' && method.AuthorizerId !== undefined);
    const open = methods.filter((method) => !credentialed(method));
    expect(open.map((method) => method.HttpMethod).sort()).toEqual(['GET', 'GET', 'GET']);
    expect(methods.filter((method) => method.HttpMethod === 'ANY').every(credentialed)).toBe(true);
  });
});

/** Why `fn` may hold `action` on `resources`; undefined when nothing justifies it. */
function justify(
  fn: FunctionFacts,
  action: string,
  resources: string[],
  variant: string,
): string | undefined {
  const all = (pattern: RegExp) => resources.every((resource) => pattern.test(resource));
  if (PLATFORM_ACTIONS.logs.includes(action) && all(new RegExp(`^<${fn.id}Logs[A-Z0-9]+\\.Arn>$`)))
    return 'Lambda writes the function log';
  if (variant === 'RabbitMQ bus' && PLATFORM_ACTIONS.vpc.includes(action))
    return 'Lambda places the function in the VPC';
  if (action.startsWith('xray:')) return 'X-Ray tracing';
  if (
    fn.id === 'RepliesFunction' &&
    variant === 'RabbitMQ bus' &&
    PLATFORM_ACTIONS.mqTrigger.includes(action)
  )
    return 'the Amazon MQ event source mapping';
  if (
    fn.id === 'TimersFunction' &&
    action === 'sqs:SendMessage' &&
    all(/^<TimerQueueFailures[A-Z0-9]+\.Arn>$/)
  )
    return "Lambda sends the function's failed asynchronous invocations to its on-failure destination";
  if (fn.id === 'JobEventsFunction') {
    if (PLATFORM_ACTIONS.streamTrigger.includes(action) && all(/^<StoreTable[A-Z0-9]+\.StreamArn>$/))
      return 'the DynamoDB stream event source mapping reads the table stream';
    if (action === 'dynamodb:ListStreams' && all(/^\*$/))
      return 'the DynamoDB stream event source mapping (ListStreams has no resource-level permissions)';
    if (action === 'sqs:SendMessage' && all(/^<JobEventsFailures[A-Z0-9]+\.Arn>$/))
      return "the event source mapping sends a discarded batch's place to its on-failure queue";
    if (
      action === 'events:PutEvents' &&
      all(/^arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus\/default$/)
    )
      return "the job events, on the account's default bus only";
  }
  if (
    fn.id === 'ArchiveFunction' &&
    PLATFORM_ACTIONS.streamTrigger.includes(action) &&
    all(/^(<StoreTable[A-Z0-9]+\.StreamArn>|\*)$/)
  )
    return "the DynamoDB event source mapping of the table's stream (ListStreams takes no resource)";
  if (
    fn.id === 'ArchiveFunction' &&
    ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'].includes(action) &&
    all(/^<ArchiveFailures[A-Z0-9]+\.Arn>$/)
  )
    return "Lambda sends a batch that exhausted its retries to the event source's on-failure destination";
  const triggerQueue = /^<(SqsBusReplies|TimerQueue|SqsBusStepDeadLetters)[A-Z0-9]+\.Arn>$/;
  if (PLATFORM_ACTIONS.sqsTrigger.includes(action) && all(triggerQueue) && fn.id !== 'ApiFunction')
    return 'the SQS event source mapping of its trigger queue';
  if (!fn.code.has(action)) return undefined;
  if (action === 'sqs:ListQueues' && all(/^\*$/)) return 'ListQueues has no resource-level permissions';
  if (action.startsWith('dynamodb:') && all(/^<StoreTable[A-Z0-9]+\.Arn>(\/index\/gsi[123])?$/))
    return 'the store';
  if (
    action.startsWith('sqs:') &&
    all(
      /^(arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:[A-Za-z0-9_-]+\*|<TimerQueue[A-Z0-9]+\.Arn>)$/,
    )
  )
    return 'the bus and the timer queue';
  if (action === 'secretsmanager:GetSecretValue' && all(/^<RabbitMqBusCredentials[A-Z0-9]+>$/))
    return 'the broker secret';
  if (
    action === 'secretsmanager:GetSecretValue' &&
    variant === 'params secrets' &&
    all(/^arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:switchyard\/\*$/)
  )
    return 'the secrets params name, under -c secretsPrefix only';
  if (
    action === 'secretsmanager:GetSecretValue' &&
    fn.id === 'ApiAuthorizerFunction' &&
    all(/^<RootToken[A-Z0-9]+>$/)
  )
    return 'the root token, read by the authorizer only';
  if (
    action.startsWith('scheduler:') &&
    all(/^arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/Switchyard-workflows\/\*$/)
  )
    return "the workflow schedules, in the stack's schedule group";
  if (action === 'iam:PassRole' && all(/^<SchedulesInvokeRole[A-Z0-9]+\.Arn>$/))
    return 'the role EventBridge Scheduler invokes the timers function with';
  if (action === 's3:PutObject' && all(/^<ArchiveBucket[A-Z0-9]+\.Arn>\/jobs\/\*$/))
    return "the archive's objects, under its prefix";
  return undefined;
}
