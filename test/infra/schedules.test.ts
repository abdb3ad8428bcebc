import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  AUTHORIZER_SDK_TIMEOUTS,
  HANDLER_SDK_TIMEOUTS,
  longestSdkCallMs,
} from '../../functions/aws/sdk-clients.js';
import { HandlerFunction } from '../../infra/constructs/handler-function.js';
import { DEPLOYED_FAN_OUT_SLICE } from '../../infra/handler-environment.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { asList, type CfnResource, renderValue, resourcesOfType } from './template-queries.js';

/*
 * The deployed schedules meet AWS's rules (issue 31, blockers 1 to 3): Scheduler reachable from the
 * broker's VPC, a trust policy Scheduler can satisfy, and a tick that fails is retried, recorded and
 * alarmed rather than ending its schedule.
 */

const CDK = { timeout: 60_000 };

function propertiesOf(resource: CfnResource | undefined): Record<string, unknown> {
  if (!resource?.Properties) throw new Error('a resource without properties');
  return resource.Properties;
}

function one(template: SynthesizedStack['template'], type: string): [string, CfnResource] {
  const found = Object.entries(resourcesOfType(template, type));
  expect(found, type).toHaveLength(1);
  return found[0] as [string, CfnResource];
}

function logicalIdOf(synthesized: SynthesizedStack, id: string): string {
  const fn = synthesized.stack.node.findChild(id) as HandlerFunction;
  return synthesized.stack.getLogicalId(fn.function.node.defaultChild as lambda.CfnFunction);
}

function alarmMetrics(
  synthesized: SynthesizedStack,
): Record<string, { namespace: unknown; name: unknown; dimensions: string }> {
  return Object.fromEntries(
    Object.entries(resourcesOfType(synthesized.template, 'AWS::CloudWatch::Alarm')).map(([id, alarm]) => [
      id,
      {
        namespace: alarm.Properties?.Namespace,
        name: alarm.Properties?.MetricName,
        dimensions: JSON.stringify(alarm.Properties?.Dimensions ?? []),
      },
    ]),
  );
}

describe.each<{ bus: string; context: Record<string, string> }>([
  { bus: 'sqs', context: {} },
  { bus: 'rabbitmq', context: { bus: 'rabbitmq' } },
])('workflow schedules on the $bus bus', CDK, ({ bus, context }) => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack(context);
  }, 60_000);

  test("the Scheduler role's trust policy names the schedule GROUP's ARN as aws:SourceArn", () => {
    // EventBridge Scheduler User Guide, "Confused deputy prevention"
    // (https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html):
    // "The value of aws:SourceArn must be your EventBridge Scheduler schedule group ARN ... Do not
    // scope the aws:SourceArn statement to a specific schedule or a schedule name prefix."
    const roles = Object.values(resourcesOfType(synthesized.template, 'AWS::IAM::Role')).filter((role) =>
      JSON.stringify(role.Properties?.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'),
    );
    expect(roles).toHaveLength(1);
    const [statement] = (
      propertiesOf(roles[0]).AssumeRolePolicyDocument as { Statement: Record<string, unknown>[] }
    ).Statement;
    const conditions = statement?.Condition as Record<string, Record<string, unknown>>;
    const sourceArns = Object.values(conditions).flatMap((operator) =>
      'aws:SourceArn' in operator ? [renderValue(operator['aws:SourceArn'])] : [],
    );
    expect(sourceArns).toEqual([
      'arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule-group/Switchyard-workflows',
    ]);
    expect(conditions.StringEquals?.['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
  });

  test('a tick the timers function took and failed is retried twice, then sent to the failure queue', () => {
    const [, config] = one(synthesized.template, 'AWS::Lambda::EventInvokeConfig');
    const timers = logicalIdOf(synthesized, 'TimersFunction');
    expect(config.Properties?.FunctionName).toEqual({ Ref: timers });
    // Scheduler and the sweep's rule invoke the live alias, whose own configuration applies.
    expect(config.Properties?.Qualifier).toBe('live');
    expect(config.Properties?.MaximumRetryAttempts).toBe(2);
    const destination = renderValue(
      (propertiesOf(config).DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure
        .Destination,
    );
    const failures = Object.entries(resourcesOfType(synthesized.template, 'AWS::SQS::Queue')).find(
      ([, queue]) => queue.Properties?.QueueName === 'Switchyard_switchyard-timers-failed',
    );
    expect(failures, 'the failure queue').toBeDefined();
    expect(destination).toBe(`<${failures?.[0]}.Arn>`);
  });

  test('alarms on Scheduler failures of the group and on the failure queue', () => {
    const alarms = Object.values(alarmMetrics(synthesized));
    for (const name of ['TargetErrorCount', 'InvocationDroppedCount']) {
      expect(alarms).toContainEqual({
        namespace: 'AWS/Scheduler',
        name,
        dimensions: JSON.stringify([{ Name: 'ScheduleGroup', Value: 'Switchyard-workflows' }]),
      });
    }
    const failures = Object.entries(resourcesOfType(synthesized.template, 'AWS::SQS::Queue')).find(
      ([, queue]) => queue.Properties?.QueueName === 'Switchyard_switchyard-timers-failed',
    )?.[0];
    expect(
      alarms.some(
        (alarm) =>
          alarm.name === 'ApproximateNumberOfMessagesVisible' && alarm.dimensions.includes(`"${failures}"`),
      ),
    ).toBe(true);
  });

  test('the timers function may create a missing schedule (the repair sweep), in the group only', () => {
    const timersRole = `${'TimersFunction'}Role`;
    const statements = Object.entries(resourcesOfType(synthesized.template, 'AWS::IAM::Policy'))
      .filter(([id]) => id.startsWith(timersRole))
      .flatMap(
        ([, policy]) =>
          (propertiesOf(policy).PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      );
    const rearm = statements.find((statement) => statement.Sid === 'RearmSchedules');
    expect(asList(rearm?.Action as string[]).sort()).toEqual([
      'scheduler:CreateSchedule',
      'scheduler:GetSchedule',
      'scheduler:UpdateSchedule',
    ]);
    expect(asList(rearm?.Resource).map(renderValue)).toEqual([
      'arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Switchyard-workflows/*',
    ]);
  });

  test('fan-outs create their children a thousand per transition, not the engine’s 10,000 in one invocation', () => {
    const environments = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Function'))
      .map(
        (fn) =>
          (propertiesOf(fn).Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables,
      )
      .filter((variables) => variables?.TABLE_NAME !== undefined);
    expect(environments.length).toBeGreaterThan(3);
    for (const variables of environments)
      expect(variables?.FAN_OUT_SLICE).toBe(String(DEPLOYED_FAN_OUT_SLICE));
  });

  test('every function outlasts the longest AWS SDK call it can make', () => {
    const functions = synthesized.stack.node
      .findAll()
      .filter((construct): construct is HandlerFunction => construct instanceof HandlerFunction);
    expect(functions.length).toBeGreaterThan(3);
    for (const fn of functions) {
      const timeouts =
        fn.node.id === 'ApiAuthorizerFunction' ? AUTHORIZER_SDK_TIMEOUTS : HANDLER_SDK_TIMEOUTS;
      const timeoutMs = ((fn.function.node.defaultChild as lambda.CfnFunction).timeout ?? 3) * 1000;
      expect(longestSdkCallMs(timeouts), fn.node.id).toBeLessThan(timeoutMs);
    }
  });

  if (bus === 'rabbitmq') {
    test("the functions in the broker's VPC reach EventBridge Scheduler through an interface endpoint", () => {
      // Registration (the deploy's custom resource, PUT /api/workflow) and each tick's re-arm call
      // Scheduler from the VPC, which has no route out: without the endpoint they hang.
      const endpoints = Object.values(resourcesOfType(synthesized.template, 'AWS::EC2::VPCEndpoint')).map(
        (endpoint) => ({
          service: renderValue(endpoint.Properties?.ServiceName),
          type: endpoint.Properties?.VpcEndpointType,
        }),
      );
      expect(endpoints).toContainEqual({
        service: 'com.amazonaws.<AWS::Region>.scheduler',
        type: 'Interface',
      });
    });
  }
});
