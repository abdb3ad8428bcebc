import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Where Powertools metrics land: POWERTOOLS_METRICS_NAMESPACE and its default `service` dimension. */
export const METRICS_NAMESPACE = 'Switchyard';
export const SERVICE_NAME = 'switchyard';

export interface MonitoringProps {
  /** Dead-letter queues by a readable name: any message in one is worth a look. */
  deadLetterQueues: Record<string, sqs.IQueue>;
  /** Functions by a readable name. */
  functions: Record<string, lambda.IFunction>;
}

/**
 * Alarms on what needs a person: a message in a dead-letter queue, a function error, a failed job.
 * They have no actions; subscribe them to a topic where operators get paged.
 */
export class Monitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const atLeastOnce = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      this.alarms.push(
        new cloudwatch.Alarm(this, `${name}Depth`, {
          ...atLeastOnce,
          alarmDescription: `Messages are waiting in the ${name} dead-letter queue`,
          metric: queue.metricApproximateNumberOfMessagesVisible({
            period: Duration.minutes(1),
            statistic: 'Maximum',
          }),
        }),
      );
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      this.alarms.push(
        new cloudwatch.Alarm(this, `${name}Errors`, {
          ...atLeastOnce,
          alarmDescription: `The ${name} function failed`,
          metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        }),
      );
    }
    this.alarms.push(
      new cloudwatch.Alarm(this, 'JobsFailed', {
        ...atLeastOnce,
        alarmDescription: 'Jobs failed (the JobsFailed metric the handlers emit with Powertools)',
        metric: new cloudwatch.Metric({
          namespace: METRICS_NAMESPACE,
          metricName: 'JobsFailed',
          dimensionsMap: { service: SERVICE_NAME },
          period: Duration.minutes(5),
          statistic: 'Sum',
        }),
      }),
    );
  }
}
