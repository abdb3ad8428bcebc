import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { SwitchyardSettings } from '../settings.js';
import type { HandlerFunction } from './handler-function.js';

export interface WorkflowSchedulesProps {
  settings: SwitchyardSettings;
}

/** Schedule actions on the group's schedules (those of workflows registered later included). */
const SYNC_ACTIONS = [
  'scheduler:GetSchedule',
  'scheduler:CreateSchedule',
  'scheduler:UpdateSchedule',
  'scheduler:DeleteSchedule',
];
/** The timers function re-arms a schedule at each tick, and its repair sweep creates a missing one. */
const REARM_ACTIONS = ['scheduler:GetSchedule', 'scheduler:UpdateSchedule', 'scheduler:CreateSchedule'];

/** The stack's schedule group: `<stackName>-workflows`, cut to Scheduler's 64 characters. */
export function scheduleGroupName(stackName: string): string {
  return `${stackName}-workflows`.slice(0, 64);
}

/**
 * Workflow schedules (`schedules:`) on EventBridge Scheduler: the stack's schedule group, which the
 * registering functions fill with one one-time schedule per entry at run time, and the role
 * Scheduler invokes the target with (lambda:InvokeFunction on that one function, nothing else).
 */
export class WorkflowSchedules extends Construct {
  readonly groupName: string;
  readonly group: scheduler.CfnScheduleGroup;
  readonly invokeRole: iam.Role;
  /** `arn:…:schedule/<group>/*`: the schedules are named at run time, from the workflows. */
  readonly schedulesArn: string;
  /** `arn:…:schedule-group/<group>`: what Scheduler names as the source when it takes the role. */
  readonly groupArn: string;

  constructor(scope: Construct, id: string, props: WorkflowSchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.groupName = scheduleGroupName(props.settings.stackName);
    this.group = new scheduler.CfnScheduleGroup(this, 'Group', { name: this.groupName });
    this.schedulesArn = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
    });
    this.groupArn = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule-group',
      resourceName: this.groupName,
    });
    // The EventBridge Scheduler guide, "Confused deputy prevention": aws:SourceArn is the schedule
    // GROUP's ARN, never a schedule's or a name prefix (Scheduler would not be allowed to take it).
    this.invokeRole = new iam.Role(this, 'InvokeRole', {
      description: `EventBridge Scheduler invokes the timers function of ${props.settings.stackName} at workflow schedule ticks`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.groupArn },
        },
      }),
    });
  }

  /**
   * The function each tick invokes (the timers function). A policy of its own, not inline in the
   * role: every function's environment names the role, so the role must not depend on a function.
   */
  invoke(target: HandlerFunction): void {
    this.invokeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'InvokeTimers',
        actions: ['lambda:InvokeFunction'],
        // The live alias, which new schedules target; and the function itself, which schedules armed
        // before the alias existed still name (a re-arm keeps a schedule's target).
        resources: [target.alias.functionArn, target.function.functionArn],
      }),
    );
  }

  /** Environment of every function: where schedules live and the role they run with. */
  get environment(): Record<string, string> {
    return { SCHEDULE_GROUP: this.groupName, SCHEDULE_ROLE_ARN: this.invokeRole.roleArn };
  }

  /** A function that registers workflows: creates, updates and deletes their schedules. */
  allowSync(fn: HandlerFunction, target: HandlerFunction): void {
    fn.function.addEnvironment('SCHEDULE_TARGET_ARN', target.alias.functionArn);
    this.allow(fn, 'SyncSchedules', SYNC_ACTIONS);
  }

  /** The tick's function: re-arms a schedule for its next tick, and repairs one that is missing or late. */
  allowRearm(fn: HandlerFunction): void {
    this.allow(fn, 'RearmSchedules', REARM_ACTIONS);
  }

  private allow(fn: HandlerFunction, sid: string, actions: string[]): void {
    fn.allow(sid, actions, [this.schedulesArn]);
    fn.allow(`${sid}PassRole`, ['iam:PassRole'], [this.invokeRole.roleArn], {
      StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
    fn.acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.groupName}/*]`,
      `Each workflow schedule is created at run time, named after its workflow and schedule (functions/aws/eventbridge-schedules.ts): held to the stack's group ${this.groupName}.`,
    );
  }
}
