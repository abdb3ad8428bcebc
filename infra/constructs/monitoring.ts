import { Duration, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUE_DIMENSION, QUEUE_METRIC_NAMES } from '../../functions/aws/queue-metrics-emf.js';

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

/** Age of the oldest step request (SQS) above which no worker takes requests: 30 minutes. */
export const STEP_QUEUE_AGE_SECONDS = 30 * 60;
/** A request stored and not sent this long is one the bus keeps refusing (the sweep re-sends every minute). */
export const UNSENT_REQUEST_AGE_SECONDS = 15 * 60;
/** A function that ran this close to its timeout (maximum Duration) is about to time out. */
export const NEAR_TIMEOUT = 0.9;
/** CloudWatch metric math takes at most 10 metrics per alarm. */
const METRICS_PER_ALARM = 10;

/** The Amazon MQ broker and its queues, measured by the manager (Amazon MQ for RabbitMQ 4 publishes no per-queue metrics). */
export interface BrokerMonitoring {
  /** The broker's name: the `Broker` dimension of AWS/AmazonMQ's broker metrics. */
  brokerName: string;
  replyQueue: string;
  parkedQueue: string;
  /** Where the replies function puts a reply it died on too often (the poison-reply policy). */
  poisonedQueue: string;
}

export interface MonitoringProps {
  /** Dead-letter queues by a readable name: any message in one is worth a look. */
  deadLetterQueues: Record<string, sqs.IQueue>;
  /** Queues whose oldest message must not get older than the threshold, in seconds. */
  queueAges: Record<string, { queue: sqs.IQueue; seconds: number }>;
  /** Functions by a readable name. */
  functions: Record<string, lambda.Function>;
  /** The API's stage: 5XX errors and latency. */
  /** The API's stage: the REST API's, or the HTTP API's (`-c api=http`). */
  apiStage: ApiStageMetrics;
  /** The step queues deployed with the stack (SQS bus): the age of their oldest request. */
  stepQueues: readonly sqs.IQueue[];
  /** The table's global secondary indexes. */
  tableIndexes: readonly string[];
  /** The EventBridge Scheduler group of the workflow schedules. */
  scheduleGroup: string;
  table: dynamodb.ITable;
  /** The Amazon MQ broker (RabbitMQ bus). */
  broker?: BrokerMonitoring;
  /** With an address, the alarm topic is subscribed by email. */
  alarmEmail?: string;
  /** Titles the dashboard. */
  stackName: string;
}

/** What the API's alarms read: a REST API's stage and an HTTP API's both give these. */
export type ApiStageMetrics = Pick<
  apigateway.Stage | apigwv2.HttpStage,
  'metricServerError' | 'metricLatency'
>;

/**
 * Alarms on what needs a person, every one notifying one SNS topic (subscribe your pager to it, or
 * give `-c alarmEmail`); business failures (jobs that failed) on a topic of their own, which nobody
 * is paged by; and a CloudWatch dashboard of jobs, steps, queues and functions.
 * docs/deploying.md says what each alarm means.
 */
export class Monitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  /** The paging topic: the system needs a person. */
  readonly topic: sns.Topic;
  /** Jobs that failed: the workflows' business, not the system's health. */
  readonly businessTopic: sns.Topic;
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
    this.businessTopic = new sns.Topic(this, 'BusinessTopic', {
      displayName: `${props.stackName} failed jobs`,
      enforceSSL: true,
    });
    Validations.of(this.businessTopic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Business alarm notifications hold an alarm name, state and count, no job data; CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key.',
    });

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
      const timeout = fn.timeout?.toMilliseconds() ?? 3_000;
      this.alarm(`${name}DurationNearTimeout`, {
        ...atLeastOnce,
        threshold: Math.floor(timeout * NEAR_TIMEOUT),
        alarmDescription: `An invocation of the ${name} function ran past ${NEAR_TIMEOUT * 100}% of its ${timeout / 1000} s timeout`,
        metric: fn.metricDuration({ period: Duration.minutes(5), statistic: 'Maximum' }),
      });
    }
    this.apiAlarms(props.apiStage);
    this.stepQueueAlarms(props.stepQueues);
    for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      this.alarm(`Table${metricName}`, {
        ...atLeastOnce,
        alarmDescription: `DynamoDB throttled requests to the table (${metricName})`,
        metric: props.table.metric(metricName, fiveMinutes),
      });
    }
    // An index's throttling is its own (the table's metrics leave it out), and throttles the table's writes too.
    const indexThrottles = Object.fromEntries(
      props.tableIndexes.flatMap((index, i) =>
        ['ReadThrottleEvents', 'WriteThrottleEvents'].map((metricName) => [
          `${metricName === 'ReadThrottleEvents' ? 'r' : 'w'}${i}`,
          props.table.metric(metricName, {
            ...fiveMinutes,
            dimensionsMap: { TableName: props.table.tableName, GlobalSecondaryIndexName: index },
          }),
        ]),
      ),
    );
    this.alarm('TableIndexThrottleEvents', {
      ...atLeastOnce,
      alarmDescription: `DynamoDB throttled the table's global secondary indexes (${props.tableIndexes.join(', ')})`,
      metric: new cloudwatch.MathExpression({
        expression: Object.keys(indexThrottles).join(' + '),
        usingMetrics: indexThrottles,
        period: Duration.minutes(5),
        label: 'index throttle events',
      }),
    });
    this.schedulerAlarms(props.scheduleGroup);
    // A failed job is the workflow's business (a worker said no): its own topic, which pages nobody.
    this.alarm(
      'JobsFailed',
      {
        ...atLeastOnce,
        alarmDescription: 'Jobs failed (the JobsFailed metric the handlers emit with Powertools): not paging',
        metric: switchyardMetric('JobsFailed'),
      },
      this.businessTopic,
    );
    if (props.broker) this.brokerAlarms(props.broker);
    this.dashboard = this.buildDashboard(props);
  }

  /**
   * API Gateway's view: 5XX answers (the function failed or timed out, API Gateway's own faults) and
   * latency near the 29-second integration limit.
   */
  private apiAlarms(stage: ApiStageMetrics): void {
    this.alarm('ApiServerErrors', {
      threshold: 5,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: 'The API answered 5 or more 5XX errors in 5 minutes',
      metric: stage.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
    });
    this.alarm('ApiLatency', {
      threshold: 10_000,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        "The API's p99 latency stayed at 10 s or more for 15 minutes (the integration limit is 29 s)",
      metric: stage.metricLatency({ period: Duration.minutes(5), statistic: 'p99' }),
    });
  }

  /** The oldest request of the step queues (SQS): no worker takes requests. Ten queues per alarm. */
  private stepQueueAlarms(queues: readonly sqs.IQueue[]): void {
    for (let first = 0; first < queues.length; first += METRICS_PER_ALARM) {
      const ages = Object.fromEntries(
        queues
          .slice(first, first + METRICS_PER_ALARM)
          .map((queue, i) => [
            `q${i}`,
            queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
          ]),
      );
      const suffix = first === 0 ? '' : String(first / METRICS_PER_ALARM + 1);
      this.alarm(`StepQueuesAge${suffix}`, {
        threshold: STEP_QUEUE_AGE_SECONDS,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `A step request has waited ${STEP_QUEUE_AGE_SECONDS / 60} minutes for a worker`,
        metric: new cloudwatch.MathExpression({
          expression: `MAX([${Object.keys(ages).join(', ')}])`,
          usingMetrics: ages,
          period: Duration.minutes(1),
          label: 'oldest step request (s)',
        }),
      });
    }
  }

  /**
   * The broker: its memory, disk and CPU (AWS/AmazonMQ's broker metrics, which RabbitMQ 4 still
   * has), and the manager's own measurements of its queues (the timers function's sweep publishes
   * them: functions/aws/queue-metrics.ts), as Amazon MQ for RabbitMQ 4 publishes none per queue.
   */
  private brokerAlarms(broker: BrokerMonitoring): void {
    const brokerMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/AmazonMQ',
        metricName,
        dimensionsMap: { Broker: broker.brokerName },
        period: Duration.minutes(5),
        statistic: 'Maximum',
      });
    const sustained = {
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    this.alarm('BrokerMemoryHigh', {
      ...sustained,
      threshold: 0.8,
      alarmDescription:
        'The broker used 80% of its memory limit for 15 minutes (at the limit it blocks publishers)',
      metric: new cloudwatch.MathExpression({
        expression: 'used / limit',
        usingMetrics: { used: brokerMetric('RabbitMQMemUsed'), limit: brokerMetric('RabbitMQMemLimit') },
        period: Duration.minutes(5),
      }),
    });
    this.alarm('BrokerDiskLow', {
      ...sustained,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
      threshold: 2,
      alarmDescription:
        "The broker's free disk stayed under twice its limit for 15 minutes (at the limit it blocks publishers)",
      metric: new cloudwatch.MathExpression({
        expression: 'free / limit',
        usingMetrics: {
          free: brokerMetric('RabbitMQDiskFree'),
          limit: brokerMetric('RabbitMQDiskFreeLimit'),
        },
        period: Duration.minutes(5),
      }),
    });
    this.alarm('BrokerCpuHigh', {
      ...sustained,
      threshold: 85,
      alarmDescription: "The broker's CPU stayed at 85% or more for 15 minutes",
      metric: brokerMetric('SystemCpuUtilization'),
    });
    this.alarm('ReplyQueueDepth', {
      threshold: 1000,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: 'Replies pile up in the Amazon MQ reply queue (1000 or more for 5 minutes)',
      metric: queueMetric(QUEUE_METRIC_NAMES.depth, broker.replyQueue),
    });
    // Missing data breaches: the sweep publishes every minute, so none means nobody measures either.
    this.alarm('ReplyQueueConsumers', {
      threshold: 1,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      alarmDescription:
        'Nothing consumes the Amazon MQ reply queue (or nothing measured it): the event source mapping stopped, is disabled, or cannot log in',
      metric: queueMetric(QUEUE_METRIC_NAMES.consumers, broker.replyQueue, 'Minimum'),
    });
    this.alarm('ParkedRepliesDepth', {
      threshold: 1,
      evaluationPeriods: 15,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: 'Parked replies are not drained (15 minutes): the store may be down',
      metric: queueMetric(QUEUE_METRIC_NAMES.depth, broker.parkedQueue, 'Minimum'),
    });
    this.alarm('UnsentRequestsAge', {
      threshold: UNSENT_REQUEST_AGE_SECONDS,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `A stored request has not been sent for ${UNSENT_REQUEST_AGE_SECONDS / 60} minutes: the broker refuses it`,
      metric: switchyardMetric(QUEUE_METRIC_NAMES.oldestUnsent, {
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
    });
    this.alarm('PoisonedReplies', {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'A reply was poisoned: the replies function died with it in hand three times; its job failed, the reply waits in the poison queue',
      metric: queueMetric(QUEUE_METRIC_NAMES.depth, broker.poisonedQueue, 'Maximum'),
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

  private alarm(id: string, props: cloudwatch.AlarmProps, topic: sns.Topic = this.topic): void {
    const alarm = new cloudwatch.Alarm(this, id, props);
    alarm.addAlarmAction(new actions.SnsAction(topic));
    alarm.addOkAction(new actions.SnsAction(topic));
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
            queueMetric(QUEUE_METRIC_NAMES.depth, props.broker.replyQueue, 'Maximum', 'replies'),
            queueMetric(QUEUE_METRIC_NAMES.depth, props.broker.parkedQueue, 'Maximum', 'parked'),
            queueMetric(QUEUE_METRIC_NAMES.depth, props.broker.poisonedQueue, 'Maximum', 'poisoned'),
          ],
          right: [
            queueMetric(QUEUE_METRIC_NAMES.consumers, props.broker.replyQueue, 'Minimum', 'reply consumers'),
          ],
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

/** A queue metric the manager publishes (functions/aws/queue-metrics-emf.ts), per minute. */
function queueMetric(
  metricName: string,
  queue: string,
  statistic = 'Maximum',
  label?: string,
): cloudwatch.Metric {
  return switchyardMetric(metricName, {
    dimensionsMap: { service: SERVICE_NAME, [QUEUE_DIMENSION]: queue },
    period: Duration.minutes(1),
    statistic,
    label,
  });
}
