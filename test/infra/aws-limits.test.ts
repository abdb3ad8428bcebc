import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { scheduleName } from '../../functions/aws/eventbridge-schedules.js';
import { scheduleGroupName } from '../../infra/constructs/schedules.js';
import { MANAGER_QUEUES, sqsQueueName } from '../../infra/queue-names.js';
import { LIMITS, limitFindings, trustPolicyFindings } from './aws-limits.js';
import { assertAwsRules, awsRuleFindings } from './aws-rules.js';
import type { CfnResource } from './template-queries.js';

/** A role with one inline policy of `statements` copies of a statement, and the given trust policy. */
function aRole(statements: number, trust: Record<string, unknown> = {}): Record<string, CfnResource> {
  const statement = {
    Effect: 'Allow',
    Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    Resource: { 'Fn::GetAtt': ['Table', 'Arn'] },
  };
  return {
    Role: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [
            {
              Effect: 'Allow',
              Action: 'sts:AssumeRole',
              Principal: { Service: 'lambda.amazonaws.com' },
              ...trust,
            },
          ],
        },
      },
    },
    Policy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'Role' }],
        PolicyDocument: { Statement: Array.from({ length: statements }, () => statement) },
      },
    },
  };
}

describe('the documented limits, checked on each synthesized template (aws-limits.ts)', () => {
  test('IAM: a role whose inline policies pass 10,240 characters is found, with references counted at their longest', () => {
    expect(limitFindings(aRole(10))).toEqual([]);
    expect(limitFindings(aRole(60))).toEqual([
      expect.stringMatching(/^Role: inline policies of \d+ characters \(IAM allows 10240\)$/),
    ]);
  });

  test('Lambda: an environment over 4 KB is found, references counted at their longest', () => {
    const fn = (variables: number): Record<string, CfnResource> => ({
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Environment: {
            Variables: Object.fromEntries(
              Array.from({ length: variables }, (_, i) => [`QUEUE_URL_${i}`, { Ref: `Queue${i}` }]),
            ),
          },
        },
      },
    });
    expect(limitFindings(fn(20))).toEqual([]);
    expect(limitFindings(fn(30))).toEqual([
      `Fn: an environment of ${30 * 160 + 10 * 11 + 20 * 12} bytes (Lambda allows ${LIMITS.environmentBytes})`,
    ]);
  });

  test("trust policies: Scheduler's aws:SourceArn must be a schedule group's ARN, under an ARN or string operator", () => {
    const scheduler = (arn: string, operator = 'ArnEquals') => ({
      ...aRole(1),
      Role: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: {
            Statement: [
              {
                Effect: 'Allow',
                Action: 'sts:AssumeRole',
                Principal: { Service: 'scheduler.amazonaws.com' },
                Condition: {
                  [operator]: { 'aws:SourceArn': arn },
                  StringEquals: { 'aws:SourceAccount': '123456789012' },
                },
              },
            ],
          },
        },
      },
    });
    expect(
      trustPolicyFindings(scheduler('arn:aws:scheduler:eu-west-1:123456789012:schedule-group/S-workflows')),
    ).toEqual([]);
    // What the stack had before issue 31: a schedule wildcard, which Scheduler's source never matches.
    expect(
      trustPolicyFindings(
        scheduler('arn:aws:scheduler:eu-west-1:123456789012:schedule/S-workflows/*', 'ArnLike'),
      ),
    ).toEqual([
      "Role: Scheduler's aws:SourceArn is not a schedule group's ARN: arn:aws:scheduler:eu-west-1:123456789012:schedule/S-workflows/*",
    ]);
    expect(
      trustPolicyFindings(
        scheduler('arn:aws:scheduler:eu-west-1:123456789012:schedule-group/S', 'NumericEquals'),
      ),
    ).toEqual(['Role: aws:SourceArn under NumericEquals']);
  });

  test('SQS: every queue of the stack is a valid name (1 to 80 letters, digits, - or _) under the longest prefix', () => {
    // CreateQueue (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html):
    // "A queue name can have up to 80 characters. Valid values: alphanumeric characters, hyphens (-), and underscores (_)."
    const longestPrefix = 'P'.repeat(40);
    for (const queue of Object.values(MANAGER_QUEUES))
      expect(sqsQueueName(longestPrefix, queue)).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(() => sqsQueueName(longestPrefix, 'q'.repeat(41))).toThrow(/must be 1 to 80 letters/);
  });

  test('EventBridge Scheduler: schedule and group names are 1 to 64 of [0-9a-zA-Z-_.], for any workflow and stack name', () => {
    // CreateSchedule (https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html):
    // Name and GroupName, "Length Constraints: Minimum length of 1. Maximum length of 64. Pattern: ^[0-9a-zA-Z-_.]+$".
    const rule = /^[0-9a-zA-Z_.-]{1,64}$/;
    for (const workflow of ['a', 'team-a/report', 'ns/émoji ☃ and spaces', 'w'.repeat(300)])
      expect(scheduleName(workflow, 'c0ffee00')).toMatch(rule);
    // A stack name is a letter and up to 127 letters, digits and hyphens (infra/settings.ts).
    for (const stackName of ['S', `S${'a-'.repeat(63)}a`]) expect(scheduleGroupName(stackName)).toMatch(rule);
  });
});

/** A template with a bad schedule group name (pattern, length), a Lambda runtime that is no runtime, and a queue without a DLQ. */
function brokenTemplate(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'aws-rules-')), 'broken.template.json');
  writeFileSync(
    file,
    JSON.stringify({
      Resources: {
        Group: { Type: 'AWS::Scheduler::ScheduleGroup', Properties: { Name: `bad name!${'x'.repeat(70)}` } },
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Role: 'arn:aws:iam::123456789012:role/r',
            Code: { ZipFile: 'x' },
            Handler: 'index.handler',
            Runtime: 'nodejs99.x',
          },
        },
        Plain: { Type: 'AWS::SQS::Queue', Properties: { SqsManagedSseEnabled: true } },
      },
    }),
  );
  return file;
}

describe("AWS's own rules find what is wrong (aws-rules.ts)", { timeout: 60_000 }, () => {
  test('the resource schemas catch a pattern, a length and an enum; Guard a queue without a dead-letter queue', () => {
    const findings = awsRuleFindings(new Map([['broken', brokenTemplate()]])).broken?.join('\n');
    expect(findings).toMatch(/F3031 Group Properties\.Name/);
    expect(findings).toMatch(/F3033 Group Properties\.Name/);
    expect(findings).toMatch(/W3030 Fn Properties\.Runtime/);
    expect(findings).toMatch(/Guard sqs_dlq_check at Plain/);
  });

  test('a configuration whose template breaks them does not synthesize (synthStack checks each)', () => {
    expect(() => assertAwsRules('a broken template', brokenTemplate())).toThrow(
      /AWS's own rules find fault with the template of a broken template:\n[\s\S]*F3031 Group Properties\.Name/,
    );
  });
});
