import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { brokerNameOf } from '../../infra/constructs/rabbitmq-bus.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };
const ALARM_EMAIL_WARNING = Match.stringLikeRegexp('profile=production without -c alarmEmail');

function expectRetainedTable(synthesized: SynthesizedStack): void {
  const tables = Object.values(resourcesOfType(synthesized.template, 'AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  expect(tables[0]).toMatchObject({
    DeletionPolicy: 'Retain',
    UpdateReplacePolicy: 'Retain',
    Properties: {
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    },
  });
  for (const group of Object.values(resourcesOfType(synthesized.template, 'AWS::Logs::LogGroup'))) {
    expect(group).toMatchObject({ DeletionPolicy: 'Retain', Properties: { RetentionInDays: 90 } });
  }
}

describe('-c profile=production with the SQS bus', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({ profile: 'production', alarmEmail: 'oncall@example.com' });
  });

  test('the table is retained with deletion protection and point-in-time recovery', () => {
    expectRetainedTable(synthesized);
  });

  test('the API function reserves 100 and the reply queue starts at most 20 invocations', () => {
    const { template } = synthesized;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('HTTP API'),
      ReservedConcurrentExecutions: 100,
    });
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).map(
      (mapping) => mapping.Properties?.ScalingConfig,
    );
    expect(mappings).toContainEqual({ MaximumConcurrency: 20 });
  });

  test('every caller invokes a published version through the live alias; the API and replies deploy as canaries that roll back on their alarms', () => {
    const { template } = synthesized;
    const aliases = resourcesOfType(template, 'AWS::Lambda::Alias');
    const aliasIds = new Set(Object.keys(aliases));
    const functions = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) =>
      /^(Api|Replies|Timers|DeadLetters|RegisterWorkflows|RemoveQueues|ApiAuthorizer|JobEvents)Function/.test(
        id,
      ),
    );
    for (const alias of Object.values(aliases)) {
      expect(alias.Properties?.Name).toBe('live');
      expect(renderValue(alias.Properties?.FunctionVersion)).toMatch(/CurrentVersion/);
    }
    expect(aliasIds.size).toBe(functions.length);
    // Event sources, the sweep's rule and the API's integration name an alias, never the bare function.
    // (An SQS mapping names it `<function>:live`, taken from the alias's ARN; the Amazon MQ ones its ARN.)
    const namesAnAlias = (value: unknown) =>
      [...JSON.stringify(value).matchAll(/"Ref":"([A-Za-z0-9]+)"/g)].some((match) =>
        aliasIds.has(match[1] as string),
      );
    for (const mapping of Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'))) {
      const name = mapping.Properties?.FunctionName;
      expect(namesAnAlias(name), JSON.stringify(name)).toBe(true);
    }
    for (const rule of Object.values(resourcesOfType(template, 'AWS::Events::Rule'))) {
      for (const target of (rule.Properties?.Targets ?? []) as { Arn: { Ref?: string } }[])
        if (target.Arn.Ref) expect(aliasIds.has(target.Arn.Ref)).toBe(true);
    }
    const integrations = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))
      .map((method) => renderValue((method.Properties?.Integration as { Uri?: unknown } | undefined)?.Uri))
      .filter((uri) => uri.includes('lambda:path'));
    expect(integrations.length).toBeGreaterThan(0);
    for (const uri of integrations) expect(uri).toMatch(/<ApiFunctionLive[A-F0-9]+>/);
    // CodeDeploy: 10% for 5 minutes, rolled back on the alias's errors or throttles.
    const groups = Object.values(resourcesOfType(template, 'AWS::CodeDeploy::DeploymentGroup'));
    expect(groups).toHaveLength(2);
    for (const group of groups) {
      expect(group.Properties).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        AlarmConfiguration: { Enabled: true },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
        },
      });
      expect(
        (group.Properties?.AlarmConfiguration as { Alarms?: unknown[] } | undefined)?.Alarms,
      ).toHaveLength(2);
    }
    const shifted = Object.entries(aliases)
      .filter(([, alias]) => alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate)
      .map(([id]) => id.replace(/Live[A-F0-9]+$/, ''));
    expect(shifted.sort()).toEqual(['ApiFunction', 'RepliesFunction']);
  });

  test('every alarm notifies the topic, which the address is subscribed to; no warning', () => {
    const { template, stack } = synthesized;
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(5);
    for (const alarm of alarms) expect(alarm.Properties?.AlarmActions).toHaveLength(1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    Annotations.fromStack(stack).hasNoWarning('*', ALARM_EMAIL_WARNING);
  });

  test('cdk-nag clean', () => {
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });
});

describe('-c profile=production with the RabbitMQ bus', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({ profile: 'production', bus: 'rabbitmq' });
  });

  test('a RabbitMQ cluster across zones on mq.m7g.large', () => {
    const brokers = Object.values(resourcesOfType(synthesized.template, 'AWS::AmazonMQ::Broker'));
    expect(brokers).toHaveLength(1);
    expect(brokers[0]?.Properties).toMatchObject({
      EngineType: 'RABBITMQ',
      DeploymentMode: 'CLUSTER_MULTI_AZ',
      HostInstanceType: 'mq.m7g.large',
    });
    expect(brokers[0]?.Properties?.SubnetIds).toHaveLength(2);
  });

  test('four reply queues, each with an event source mapping of its own, and the parked queue with one', () => {
    // For RabbitMQ, Lambda limits each Amazon MQ event source mapping to one concurrent execution
    // environment (https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html, "Concurrency"), so each
    // reply queue is one lane; the functions shard jobs over the queues REPLY_QUEUES names.
    const { template } = synthesized;
    const queues = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'))
      .map((mapping) => mapping.Properties as { Queues?: string[]; BatchSize?: number })
      .filter((properties) => properties.Queues)
      .map((properties) => ({ queues: properties.Queues, batch: properties.BatchSize }));
    expect(queues).toEqual(
      [
        'workflow-manager',
        'workflow-manager-1',
        'workflow-manager-2',
        'workflow-manager-3',
        'workflow-manager.parked',
      ].map((queue) => ({ queues: [queue], batch: 10 })),
    );
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ REPLY_QUEUES: '4' }) },
    });
  });

  test('an existing single-broker stack moving to the profile gets a broker of another name, which CloudFormation can replace', () => {
    // CloudFormation refuses to replace a resource with a fixed custom name: the name changes with
    // the settings that replace the broker, and not with the others.
    const name = brokerNameOf(
      'Switchyard',
      {
        deploymentMode: 'CLUSTER_MULTI_AZ',
        engineVersion: '3.13',
        instanceType: 'mq.m7g.large',
        replyQueues: 1,
      },
      2,
    );
    const [broker] = Object.values(resourcesOfType(synthesized.template, 'AWS::AmazonMQ::Broker'));
    expect(broker?.Properties?.BrokerName).toBe(name);
    const single = brokerNameOf(
      'Switchyard',
      {
        deploymentMode: 'SINGLE_INSTANCE',
        engineVersion: '3.13',
        instanceType: 'mq.t3.micro',
        replyQueues: 1,
      },
      2,
    );
    expect(single).not.toBe(name);
    expect(
      brokerNameOf(
        'Switchyard',
        {
          deploymentMode: 'SINGLE_INSTANCE',
          engineVersion: '3.13',
          instanceType: 'mq.m7g.large',
          replyQueues: 1,
        },
        2,
      ),
    ).toBe(single);
    expect(
      brokerNameOf(
        'S'.repeat(128),
        {
          deploymentMode: 'CLUSTER_MULTI_AZ',
          engineVersion: '4.2',
          instanceType: 'mq.m7g.large',
          replyQueues: 1,
        },
        2,
      ),
    ).toMatch(/^[A-Za-z0-9_-]{1,50}$/);
  });

  test('the table is retained with deletion protection and point-in-time recovery', () => {
    expectRetainedTable(synthesized);
  });

  test('scoped tokens by default (-c auth=token): a Lambda authorizer, no API key', () => {
    synthesized.template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    expect(synthesized.stack.node.tryFindChild('ApiAuthorizerFunction')).toBeDefined();
    Annotations.fromStack(synthesized.stack).hasNoWarning('*', Match.stringLikeRegexp('auth=apiKey'));
  });

  test('without -c alarmEmail the synth warns that the alarms reach nobody yet', () => {
    Annotations.fromStack(synthesized.stack).hasWarning('*', ALARM_EMAIL_WARNING);
    synthesized.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  test('cdk-nag clean', () => {
    expect(unacknowledgedFindings(synthesized)).toEqual([]);
  });
});

describe('-c profile=production with settings given explicitly', CDK, () => {
  test('a single-instance broker and the API key when asked, each with a warning', () => {
    const { template, stack } = synthStack({
      profile: 'production',
      bus: 'rabbitmq',
      brokerDeploymentMode: 'SINGLE_INSTANCE',
      auth: 'apiKey',
      alarmEmail: 'oncall@example.com',
    });
    template.hasResourceProperties('AWS::AmazonMQ::Broker', {
      DeploymentMode: 'SINGLE_INSTANCE',
      HostInstanceType: 'mq.m7g.large',
    });
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 1);
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('single-instance broker'));
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp('-c auth=apiKey: the one API key is admin'),
    );
  });
});
