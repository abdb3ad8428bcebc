import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Where Powertools metrics land: POWERTOOLS_METRICS_NAMESPACE and its default `service` dimension. */
export const METRICS_NAMESPACE = 'Switchyard';
export const SERVICE_NAME = 'switchyard';

/** Age of the oldest message, in seconds, above which each queue's alarm goes off. */
export const QUEUE_AGE_THRESHOLDS = {
  /** The replies function reads it within a second or two: 5 minutes means it is stuck or throttled. */
  reply: 5 * 60,
  /** Delayed up to 15 minutes by design: older than 20 means the timers function is not reading it. */
  timer: 20 * 60,
  /** Drained by the dead-letters function: 15 minutes means the drain is failing. */
  drainedDeadLetters: 15 * 60,
  /** Nobody drains them: look before their 14-day retention runs out. */
  deadLetters: 3 * 24 * 60 * 60,
} as const;

/** A queue of the Amazon MQ broker, as CloudWatch's AWS/AmazonMQ per-queue metrics name it. */
export interface BrokerQueue {
  brokerName: string;
  queue: string;
  vhost: string;
}

export interface MonitoringProps {
  /** Dead-letter queues by a readable name: any message in one is worth a look. */
  deadLetterQueues: Record<string, sqs.IQueue>;
  /** Queues whose oldest message must not get older than the threshold, in seconds. */
  queueAges: Record<string, { queue: sqs.IQueue; seconds: number }>;
  /** Functions by a readable name. */
  functions: Record<string, lambda.IFunction>;
  /** The EventBridge Scheduler group of the workflow schedules. */
  scheduleGroup: string;
  table: dynamodb.ITable;
  /** The Amazon MQ reply queue and the parked queue (RabbitMQ bus). */
  broker?: { replies: BrokerQueue; parked: BrokerQueue };
  /** With an address, the alarm topic is subscribed by email. */
  alarmEmail?: string;
  /** Titles the dashboard. */
  stackName: string;
}

/**
 * Alarms on what needs a person, every one notifying one SNS topic (subscribe your pager to it, or
 * give `-c alarmEmail`), and a CloudWatch dashboard of jobs, steps, queues and functions.
 * docs/deploying.md says what each alarm means.
 */
export class Monitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `${props.stackName} alarms`,
      enforceSSL: true,
    });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications hold alarm names, states and metric values, no job data; CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key, and a customer key would cost more than the topic.',
    });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    const atLeastOnce = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    const minute = { period: Duration.minutes(1), statistic: 'Maximum' };
    const fiveMinutes = { period: Duration.minutes(5), statistic: 'Sum' };

    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      this.alarm(`${name}Depth`, {
        ...atLeastOnce,
        alarmDescription: `Messages are waiting in the ${name} dead-letter queue`,
        metric: queue.metricApproximateNumberOfMessagesVisible(minute),
      });
    }
    for (const [name, { queue, seconds }] of Object.entries(props.queueAges)) {
      this.alarm(`${name}Age`, {
        ...atLeastOnce,
        threshold: seconds,
        evaluationPeriods: 2,
        alarmDescription: `The oldest message of the ${name} queue is older than ${seconds} seconds`,
        metric: queue.metricApproximateAgeOfOldestMessage(minute),
      });
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      this.alarm(`${name}Errors`, {
        ...atLeastOnce,
        alarmDescription: `The ${name} function failed`,
        metric: fn.metricErrors(fiveMinutes),
      });
      this.alarm(`${name}Throttles`, {
        ...atLeastOnce,
        alarmDescription: `Lambda throttled the ${name} function (reserved or account concurrency reached)`,
        metric: fn.metricThrottles(fiveMinutes),
      });
    }
    for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      this.alarm(`Table${metricName}`, {
        ...atLeastOnce,
        alarmDescription: `DynamoDB throttled requests to the table (${metricName})`,
        metric: props.table.metric(metricName, fiveMinutes),
      });
    }
    this.schedulerAlarms(props.scheduleGroup);
    this.alarm('JobsFailed', {
      ...atLeastOnce,
      alarmDescription: 'Jobs failed (the JobsFailed metric the handlers emit with Powertools)',
      metric: switchyardMetric('JobsFailed'),
    });
    if (props.broker) this.brokerAlarms(props.broker);
    this.dashboard = this.buildDashboard(props);
  }

  /**
   * The reply queue's depth, its consumers (the event source mapping: none means it stopped or was
   * disabled; CloudWatch has no metric of a mapping's state) and the parked queue.
   */
  private brokerAlarms(broker: { replies: BrokerQueue; parked: BrokerQueue }): void {
    this.alarm('ReplyQueueDepth', {
      threshold: 1000,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: 'Replies pile up in the Amazon MQ reply queue (1000 or more for 5 minutes)',
      metric: brokerQueueMetric(broker.replies, 'MessageCount'),
    });
    this.alarm('ReplyQueueConsumers', {
      threshold: 1,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      alarmDescription:
        'Nothing consumes the Amazon MQ reply queue: the event source mapping stopped, is disabled, or cannot log in',
      metric: brokerQueueMetric(broker.replies, 'ConsumerCount', 'Minimum'),
    });
    this.alarm('ParkedRepliesDepth', {
      threshold: 1,
      evaluationPeriods: 15,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: 'Parked replies are not drained (15 minutes): the store may be down',
      metric: brokerQueueMetric(broker.parked, 'MessageCount', 'Minimum'),
    });
  }

  /**
   * Scheduler's own failures, per schedule group (AWS/Scheduler): an invocation of the timers
   * function it could not make (TargetErrorCount: the role, its trust policy or the function is
   * wrong), and ticks it dropped after its retries (InvocationDroppedCount). Nothing else would say so.
   */
  private schedulerAlarms(group: string): void {
    const schedulerMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Scheduler',
        metricName,
        dimensionsMap: { ScheduleGroup: group },
        period: Duration.minutes(5),
        statistic: 'Sum',
      });
    const atLeastOnce = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    this.alarm('SchedulerTargetErrors', {
      ...atLeastOnce,
      alarmDescription: `EventBridge Scheduler could not invoke the timers function for a schedule of ${group}`,
      metric: schedulerMetric('TargetErrorCount'),
    });
    this.alarm('SchedulerInvocationsDropped', {
      ...atLeastOnce,
      alarmDescription: `EventBridge Scheduler dropped a tick of ${group} after its retries`,
      metric: schedulerMetric('InvocationDroppedCount'),
    });
  }

  private alarm(id: string, props: cloudwatch.AlarmProps): void {
    const alarm = new cloudwatch.Alarm(this, id, props);
    alarm.addAlarmAction(new actions.SnsAction(this.topic));
    alarm.addOkAction(new actions.SnsAction(this.topic));
    this.alarms.push(alarm);
  }

  private buildDashboard(props: MonitoringProps): cloudwatch.Dashboard {
    const fiveMinutes = { period: Duration.minutes(5), statistic: 'Sum' };
    const functions = Object.entries(props.functions);
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${props.stackName}-switchyard`,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Jobs',
        left: ['JobsStarted', 'JobsCompleted', 'JobsFailed', 'JobsCancelled'].map((name) =>
          switchyardMetric(name, { label: name }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Step latency (ms)',
        left: ['p50', 'p90', 'p99'].map((statistic) =>
          switchyardMetric('StepDuration', { statistic, label: `StepDuration ${statistic}` }),
        ),
        right: [switchyardMetric('StepOverhead', { statistic: 'p90', label: 'StepOverhead p90' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Steps',
        left: ['StepsDispatched', 'StepsCompleted', 'StepAttemptsFailed', 'Retries', 'Timeouts'].map((name) =>
          switchyardMetric(name, { label: name }),
        ),
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Age of the oldest message (s)',
        left: Object.entries(props.queueAges).map(([name, { queue }]) =>
          queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), label: name }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Lambda errors',
        left: functions.map(([name, fn]) => fn.metricErrors({ ...fiveMinutes, label: name })),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Lambda throttles',
        left: functions.map(([name, fn]) => fn.metricThrottles({ ...fiveMinutes, label: name })),
        width: 8,
      }),
    );
    if (props.broker) {
      dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: 'Amazon MQ reply queues',
          left: [
            brokerQueueMetric(props.broker.replies, 'MessageCount', 'Maximum', 'replies'),
            brokerQueueMetric(props.broker.parked, 'MessageCount', 'Maximum', 'parked'),
          ],
          right: [brokerQueueMetric(props.broker.replies, 'ConsumerCount', 'Minimum', 'reply consumers')],
          width: 12,
        }),
      );
    }
    return dashboard;
  }
}

function switchyardMetric(metricName: string, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME },
    period: Duration.minutes(5),
    statistic: 'Sum',
    ...options,
  });
}

/** Amazon MQ for RabbitMQ's per-queue metrics (dimensions Broker, VirtualHost, Queue). */
function brokerQueueMetric(
  queue: BrokerQueue,
  metricName: string,
  statistic = 'Maximum',
  label?: string,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/AmazonMQ',
    metricName,
    dimensionsMap: { Broker: queue.brokerName, VirtualHost: queue.vhost, Queue: queue.queue },
    period: Duration.minutes(1),
    statistic,
    label,
  });
}
