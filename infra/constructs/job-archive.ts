import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';
import { HandlerFunction } from './handler-function.js';

/** The objects' prefix (functions/adapters/s3/archive-bucket.ts, ARCHIVE_PREFIX). */
const ARCHIVE_PREFIX = 'jobs/';

export interface JobArchiveProps {
  settings: SwitchyardSettings;
  /** The table, with its stream on (NEW_AND_OLD_IMAGES: a TTL deletion's record carries the old image). */
  table: dynamodb.Table;
}

/**
 * `-c archive=true`: finished jobs archived to S3 as DynamoDB's TTL deletes them. The table's stream,
 * filtered to the TTL's removals of job heads and chunks (a REMOVE by the service
 * `dynamodb.amazonaws.com`), invokes the archive function's live alias, which writes one JSON Lines
 * object per batch (functions/handlers/archive.ts). The bucket is encrypted (SSE-KMS, the AWS managed key), versioned,
 * blocks public access, refuses plain HTTP, and its objects move to Glacier Instant Retrieval after 30 days
 * and expire after `archiveDays`. A batch that keeps failing is retried 10 times (split in halves),
 * then recorded in the `ArchiveFailures` queue (the records' place in the stream, for 14 days).
 */
export class JobArchive extends Construct {
  readonly bucket: s3.Bucket;
  readonly function: HandlerFunction;
  readonly failures: sqs.Queue;

  constructor(scope: Construct, id: string, props: JobArchiveProps) {
    super(scope, id);
    const { settings } = props;
    this.bucket = new s3.Bucket(this, 'Bucket', {
      // SSE-KMS with the AWS managed key (aws/s3), and a bucket key: one KMS call per bucket key, not per object.
      encryption: s3.BucketEncryption.KMS_MANAGED,
      bucketKeyEnabled: true,
      versioned: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [
        {
          id: 'archive-age',
          transitions: [
            { storageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(30) },
          ],
          expiration: Duration.days(settings.archive.days),
          noncurrentVersionExpiration: Duration.days(30),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'The archive is written by one function and read by operators: CloudTrail data events, if wanted, record its access; server access logs would need a bucket of their own.',
    });
    this.failures = new sqs.Queue(this, 'Failures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'It is itself the on-failure destination of the archive event source: nothing consumes it.',
    });
    this.function = new HandlerFunction(scope, 'ArchiveFunction', {
      handler: 'archive',
      description: 'Switchyard archive: jobs DynamoDB TTL deleted, from the table stream to S3 as JSON Lines',
      memorySize: 512,
      timeout: Duration.seconds(60),
      environment: { ARCHIVE_BUCKET: this.bucket.bucketName },
      settings,
    });
    this.function.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteArchiveObjects',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${ARCHIVE_PREFIX}*`)],
      }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket);
    this.function.acknowledge(
      `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${ARCHIVE_PREFIX}*]`,
      'Only PutObject, only under the archive prefix: each batch writes an object named by its day and time, unknown in advance.',
    );
    this.function.acknowledge(
      'AwsSolutions-IAM5[Resource::*]',
      "Lambda's DynamoDB event source needs dynamodb:ListStreams, which applies to no resource (CDK grants it with the stream's own read actions on the stream ARN).",
    );
    this.function.alias.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(60),
        bisectBatchOnError: true,
        retryAttempts: 10,
        onFailure: new SqsDlq(this.failures),
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('REMOVE'),
            userIdentity: {
              type: lambda.FilterRule.isEqual('Service'),
              principalId: lambda.FilterRule.isEqual('dynamodb.amazonaws.com'),
            },
            // Job heads (`J`) and their chunks (`C#…`): nothing else of a job is archived.
            dynamodb: { Keys: { sk: { S: ['J', ...lambda.FilterRule.beginsWith('C#')] } } },
          }),
        ],
      }),
    );
  }
}
