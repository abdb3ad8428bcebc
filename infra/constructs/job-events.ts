import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MANAGER_QUEUES, sqsQueueName } from '../queue-names.js';
import type { SwitchyardSettings } from '../settings.js';
import { HandlerFunction } from './handler-function.js';
import { SECURE_QUEUE } from './sqs-bus.js';

/** Stream records a job-events invocation takes at most: their entries go 10 to a PutEvents call. */
export const JOB_EVENTS_BATCH = 100;
/** Retries of a batch that keeps failing (split in halves each time) before it goes to the failure queue. */
export const JOB_EVENTS_RETRIES = 10;

export interface JobEventsProps {
  settings: SwitchyardSettings;
  /** The table, with its stream on (NEW_AND_OLD_IMAGES: a status change is told by both images). */
  table: dynamodb.Table;
}

/**
 * Job status changes and steps waiting for someone as EventBridge events on the account's default
 * bus (docs/deploying.md, "Events on EventBridge"), as Step Functions sends its executions' status
 * changes. The table's stream, filtered to writes of job heads (`sk` = `J`: no other item invokes
 * anything), invokes the job-events function's live alias, which compares each head's old and new
 * images and puts the events, 10 to a call, reporting the first record whose events EventBridge
 * refused (ReportBatchItemFailures). A batch that keeps failing is retried 10 times, split in
 * halves, then its place in the stream is recorded in the `JobEventFailures` queue (alarmed).
 * The role may put events on the default bus only, and add to the table's finished counts: a
 * finished top-level job whose head TTL deleted is taken off them (with job events off, the counts of
 * finished jobs are totals since the table began: docs/deploying.md).
 */
export class JobEvents extends Construct {
  readonly function: HandlerFunction;
  readonly failures: sqs.Queue;

  constructor(scope: Construct, id: string, props: JobEventsProps) {
    super(scope, id);
    const { settings } = props;
    this.failures = new sqs.Queue(this, 'Failures', {
      ...SECURE_QUEUE,
      queueName: sqsQueueName(settings.queuePrefix, MANAGER_QUEUES.jobEventFailures),
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'It is itself the on-failure destination of the job-events event source: nothing consumes it.',
    });
    this.function = new HandlerFunction(scope, 'JobEventsFunction', {
      handler: 'job-events',
      description: 'Switchyard job events: job heads from the table stream to the default EventBridge bus',
      memorySize: 256,
      timeout: Duration.seconds(60),
      environment: { STACK_NAME: settings.stackName, COUNTS_TABLE_NAME: props.table.tableName },
      settings,
    });
    this.function.allow('PutJobEvents', ['events:PutEvents'], [defaultBusArn(this)]);
    // A finished job that TTL deleted is taken off the finished counts (one counter item's ADD).
    this.function.allow('TakeExpiredOffCounts', ['dynamodb:UpdateItem'], [props.table.tableArn]);
    // Lambda sends a discarded batch's place in the stream to the on-failure queue with the function's role.
    this.function.allow('SendDiscardedBatches', ['sqs:SendMessage'], [this.failures.queueArn]);
    this.function.acknowledge(
      'AwsSolutions-IAM5[Resource::*]',
      "Lambda's DynamoDB event source needs dynamodb:ListStreams, which applies to no resource (CDK grants it with the stream's own read actions on the stream ARN).",
    );
    this.function.alias.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: JOB_EVENTS_BATCH,
        maxBatchingWindow: Duration.seconds(1),
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: JOB_EVENTS_RETRIES,
        // A record older than a day is news no longer: its place goes to the failure queue.
        maxRecordAge: Duration.days(1),
        // Bound by hand: SqsDlq would also grant GetQueueAttributes and GetQueueUrl, which nothing calls.
        onFailure: { bind: () => ({ destination: this.failures.queueArn }) },
        filters: [
          // https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html: only the `dynamodb` key
          // (and the record's own fields) can be filtered on; a head's deletion tells nothing new.
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.or('INSERT', 'MODIFY'),
            dynamodb: { Keys: { sk: { S: lambda.FilterRule.isEqual('J') } } },
          }),
          // A head TTL deleted: a finished job leaves the finished counts (retention by TTL).
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('REMOVE'),
            userIdentity: {
              type: lambda.FilterRule.isEqual('Service'),
              principalId: lambda.FilterRule.isEqual('dynamodb.amazonaws.com'),
            },
            dynamodb: { Keys: { sk: { S: lambda.FilterRule.isEqual('J') } } },
          }),
        ],
      }),
    );
  }
}

/** The account's default event bus in the stack's region. */
export function defaultBusArn(scope: Construct): string {
  return Stack.of(scope).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' });
}
