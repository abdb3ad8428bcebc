import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { JOB_EVENTS_BATCH, JOB_EVENTS_RETRIES } from '../../infra/constructs/job-events.js';
import { unacknowledgedFindings } from './nag-findings.js';
import { synthStack } from './synth-stack.js';
import { asList, identityStatements, renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 120_000 };

/*
 * In every configuration the stack tests synthesize (stack.test.ts, least-privilege.test.ts): the job-events function on the table stream. The stream's event source mapping: partial batch
 * responses (https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html),
 * filter criteria on the `dynamodb` key only
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html).
 */

const CONFIGURATIONS: Record<string, string>[] = [
  {},
  { bus: 'rabbitmq' },
  { auth: 'token' },
  { auth: 'iam' },
];

describe.each(CONFIGURATIONS)('job events on EventBridge (-c %o)', (context) => {
  test(
    'the table streams old and new images to the job-events alias, filtered to job heads, with bounded retries and a failure queue',
    CDK,
    () => {
      const { template } = synthStack(context);
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      });
      const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter(
        (m) => renderValue(m.Properties?.EventSourceArn).includes('StreamArn'),
      );
      expect(mappings).toHaveLength(1);
      const mapping = mappings[0]?.Properties ?? {};
      expect(JSON.stringify(mapping.FunctionName)).toMatch(/"JobEventsFunctionLive[A-Z0-9]+"/);
      expect(mapping).toMatchObject({
        BatchSize: JOB_EVENTS_BATCH,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: JOB_EVENTS_RETRIES,
        StartingPosition: 'LATEST',
      });
      expect(JSON.stringify(mapping.DestinationConfig)).toMatch(/"JobEventsFailures[A-Z0-9]+","Arn"/);
      const patterns = (mapping.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map((f) =>
        JSON.parse(f.Pattern),
      );
      expect(patterns).toEqual([
        { eventName: ['INSERT', 'MODIFY'], dynamodb: { Keys: { sk: { S: ['J'] } } } },
        // TTL's deletions of heads: their jobs leave the finished counts (job-events-expired-counts.test.ts).
        {
          eventName: ['REMOVE'],
          userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
          dynamodb: { Keys: { sk: { S: ['J'] } } },
        },
      ]);
    },
  );

  test(
    'the function may put events on the default bus only, and its failure queue is alarmed; cdk-nag stays clean',
    CDK,
    () => {
      const synthesized = synthStack(context);
      const { template } = synthesized;
      expect(unacknowledgedFindings(synthesized)).toEqual([]);
      const puts = identityStatements(template).filter((statement) =>
        asList(statement.Action).some((action) => action.startsWith('events:')),
      );
      expect(
        puts.map((statement) => [
          statement.holder.replace(/[A-Z0-9]{8}$/, ''),
          asList(statement.Action),
          asList(statement.Resource).map(renderValue),
        ]),
      ).toEqual([
        [
          expect.stringMatching(/^JobEventsFunctionRoleDefaultPolicy/),
          ['events:PutEvents'],
          ['arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default'],
        ],
      ]);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmDescription: Match.stringLikeRegexp('JobEventFailures dead-letter queue'),
      });
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({ STACK_NAME: Match.anyValue(), COUNTS_TABLE_NAME: Match.anyValue() }),
        },
        Description: Match.stringLikeRegexp('job events'),
      });
    },
  );
});

describe('-c jobEvents=false', () => {
  test('no stream, no job-events function', CDK, () => {
    const { template } = synthStack({ jobEvents: 'false' });
    const tables = Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'));
    expect(tables.map((table) => table.Properties?.StreamSpecification)).toEqual([undefined]);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/JobEvents/);
  });
});
