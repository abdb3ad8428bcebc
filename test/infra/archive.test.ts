import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { unacknowledgedFindings } from './nag-findings.js';
import { synthStack } from './synth-stack.js';
import { resourcesOfType } from './template-queries.js';

/**
 * `-c archive=true`: the table's stream carries what DynamoDB's TTL deletes (a REMOVE whose
 * `userIdentity` is of type "Service", principal "dynamodb.amazonaws.com":
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html) to the
 * archive function, which writes JSON Lines to the stack's bucket.
 */

const CDK = { timeout: 120_000 };

describe('The archive (-c archive=true)', () => {
  test(
    'streams the TTL deletions of heads and chunks to the archive function’s alias, into an encrypted, private bucket that expires its objects; cdk-nag clean',
    () => {
      // Prepare
      const synthesized = synthStack({ archive: 'true', archiveDays: '90' });
      const { template } = synthesized;

      // Assess: the table's stream
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      });

      // The bucket: encrypted (SSE-KMS), versioned, no public access, HTTPS only, objects to Glacier IR then expired.
      template.hasResourceProperties('AWS::S3::Bucket', {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [
            Match.objectLike({
              ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' },
              BucketKeyEnabled: true,
            }),
          ],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LifecycleConfiguration: {
          Rules: [
            Match.objectLike({
              Status: 'Enabled',
              ExpirationInDays: 90,
              Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }],
            }),
          ],
        },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });

      // The stream's mapping: the alias, TTL removals of heads and chunks only, bounded retries, a failure queue.
      // (The job events read the same stream with a mapping of their own: job-events.test.ts.)
      const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter(
        (mapping) =>
          JSON.stringify(mapping.Properties?.EventSourceArn).includes('StreamArn') &&
          JSON.stringify(mapping.Properties?.FunctionName).includes('ArchiveFunction'),
      );
      expect(mappings).toHaveLength(1);
      const mapping = mappings[0]?.Properties ?? {};
      expect(JSON.stringify(mapping.FunctionName)).toMatch(/ArchiveFunctionLive/);
      expect(mapping).toMatchObject({
        StartingPosition: 'TRIM_HORIZON',
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        DestinationConfig: { OnFailure: { Destination: expect.anything() } },
      });
      const filters = (mapping.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
      expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
        {
          eventName: ['REMOVE'],
          userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
          dynamodb: { Keys: { sk: { S: ['J', { prefix: 'C#' }] } } },
        },
      ]);

      // The function writes objects under jobs/ and nothing else of S3.
      type Statement = { Action: string | string[]; Resource: unknown };
      const s3Grants = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).flatMap((policy) => {
        const document = policy.Properties?.PolicyDocument as { Statement?: Statement[] } | undefined;
        return (document?.Statement ?? []).filter((statement) =>
          [statement.Action].flat().some((action) => action.startsWith('s3:')),
        );
      });
      expect(s3Grants).toHaveLength(1);
      expect(s3Grants[0]?.Action).toBe('s3:PutObject');
      expect(JSON.stringify(s3Grants[0]?.Resource)).toContain('/jobs/*');
      template.hasOutput('ArchiveBucket', {});
      // A batch that exhausted its retries is an alarm, as every dead-letter queue's message is.
      const depthAlarms = Object.entries(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter(([id]) =>
        id.includes('ArchiveFailuresDepth'),
      );
      expect(depthAlarms.map(([, alarm]) => alarm.Properties?.Threshold)).toEqual([1]);
      expect(unacknowledgedFindings(synthesized)).toEqual([]);
    },
    CDK.timeout,
  );

  test(
    'is off by default: no stream (with the job events off too), no bucket, no archive function',
    () => {
      const { template } = synthStack({ jobEvents: 'false' });
      const table = Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'))[0];
      expect(table?.Properties?.StreamSpecification).toBeUndefined();
      expect(Object.keys(resourcesOfType(template, 'AWS::S3::Bucket'))).toEqual([]);
      expect(
        Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).some((id) => /Archive/.test(id)),
      ).toBe(false);
    },
    CDK.timeout,
  );
});
