import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { HandlerFunction } from './handler-function.js';

/**
 * A CodeDeploy canary of a function's `live` alias: a new version takes 10% of the invocations for
 * 5 minutes, then all of them; if the function's errors (or its throttles) alarm meanwhile, CodeDeploy
 * moves the alias back to the version it had (the alarms page the topic too). The alarms watch the alias, so they see only
 * what went through it: the event source mappings and API Gateway invoke the alias, not `$LATEST`.
 */
export class CanaryDeployment extends Construct {
  readonly group: codedeploy.LambdaDeploymentGroup;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, fn: HandlerFunction, topic: sns.ITopic) {
    super(scope, id);
    const minute = { period: Duration.minutes(1), statistic: 'Sum' };
    const whileDeploying = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    this.alarms = [
      new cloudwatch.Alarm(this, 'Errors', {
        ...whileDeploying,
        alarmDescription: `The live alias of ${fn.node.id} failed an invocation: a canary deployment rolls back`,
        metric: fn.alias.metricErrors(minute),
      }),
      new cloudwatch.Alarm(this, 'Throttles', {
        ...whileDeploying,
        alarmDescription: `Lambda throttled the live alias of ${fn.node.id}: a canary deployment rolls back`,
        metric: fn.alias.metricThrottles(minute),
      }),
    ];
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(new actions.SnsAction(topic));
      alarm.addOkAction(new actions.SnsAction(topic));
    }
    this.group = new codedeploy.LambdaDeploymentGroup(this, 'Group', {
      alias: fn.alias,
      deploymentConfig: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
      alarms: this.alarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    Validations.of(this.group).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments: the AWS managed policy CodeDeploy documents for it, limited to the aliases and hooks of this deployment group's kind.",
    });
  }
}
