import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleOutput,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import {
  nextTick,
  type ScheduleDefinition,
  scheduleKey,
  type WorkflowDefinition,
} from '../../engine/index.js';
import { isScheduleTickEvent, SCHEDULE_TICK, type ScheduleTickEvent } from './schedule-tick-event.js';

export interface EventBridgeSchedulesOptions {
  client: SchedulerClient;
  /** The stack's schedule group: every schedule of every workflow is in it. */
  group: string;
  /** The role EventBridge Scheduler takes to invoke the target. */
  roleArn: string;
  /** The function each tick invokes (the timers function); needed to create schedules, not to re-arm them. */
  targetArn?: string;
  /** @default Date.now */
  clock?: () => number;
}

export interface SyncResult {
  created: string[];
  updated: string[];
  deleted: string[];
  unchanged: string[];
  /** Among `updated`: those armed for a tick past their next one (by a clock that was ahead), and by how much. */
  ahead: { name: string; aheadMs: number }[];
}

/** What a schedule invokes, with which role. */
interface Target {
  Arn?: string;
  RoleArn?: string;
}

/**
 * Scheduler's retries of an invocation it could not deliver (the target throttled or unreachable),
 * for a day at most. They do not cover a tick the timers function took and then failed: Lambda
 * retries that one (the stack's EventInvokeConfig), and the repair sweep re-arms its schedule.
 */
const RETRY_POLICY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 };
/** A schedule whose one tick passed without being re-armed is re-armed this far ahead. */
const REPAIR_DELAY_MS = 60_000;

/**
 * A workflow's schedules as EventBridge Scheduler schedules, one per `schedules:` entry: a one-time
 * `at()` schedule for the entry's next tick (computed by croner, as serve does), which the timers
 * function re-arms for the tick after at each tick (docs/deploying.md says why not EventBridge's own
 * cron). Names are `<workflow, cut>-<hash of workflow>-<schedule key>`: at most 64 characters, and two
 * workflows never share one.
 */
export class EventBridgeSchedules {
  private readonly client: SchedulerClient;
  private readonly clock: () => number;

  constructor(private readonly options: EventBridgeSchedulesOptions) {
    this.client = options.client;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Makes the group hold exactly the definition's schedules: each created if missing, updated when it
   * targets another function or role, is disabled, or its tick passed without being re-armed (a
   * failed tick: then it fires a minute from now, for the tick it missed) or is armed for a tick
   * past its next one (a clock that was ahead re-armed it: it would stay silent until that tick;
   * it is re-armed for its next tick), and left alone otherwise; the schedules of `formerKeys` the
   * definition no longer has are deleted.
   */
  async sync(
    definition: WorkflowDefinition,
    formerKeys: Iterable<string>,
    target: Target = this.target,
  ): Promise<SyncResult> {
    const result: SyncResult = { created: [], updated: [], deleted: [], unchanged: [], ahead: [] };
    const wanted = new Map((definition.schedules ?? []).map((schedule) => [scheduleKey(schedule), schedule]));
    for (const [key, schedule] of wanted) {
      const name = scheduleName(definition.name, key);
      const existing = await this.get(name);
      if (!existing) {
        const next = nextTick(schedule, this.clock());
        if (next === undefined) continue;
        await this.write('create', this.input(definition.name, key, next, next, target)).catch(
          async (error) => {
            // Created meanwhile by another registration of the same definition: it holds the same.
            if (!(error instanceof ConflictException)) throw error;
          },
        );
        result.created.push(name);
        continue;
      }
      const repair = this.repairOf(definition.name, key, schedule, existing, target);
      if (repair) {
        await this.write('update', repair.input);
        result.updated.push(name);
        if (repair.aheadMs !== undefined) result.ahead.push({ name, aheadMs: repair.aheadMs });
      } else {
        result.unchanged.push(name);
      }
    }
    for (const key of new Set(formerKeys)) {
      if (wanted.has(key)) continue;
      const name = scheduleName(definition.name, key);
      try {
        await this.client.send(new DeleteScheduleCommand({ Name: name, GroupName: this.options.group }));
        result.deleted.push(name);
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
    }
    return result;
  }

  /**
   * The repair sweep (the timers function, every few minutes): each of the definition's schedules
   * that is missing, disabled, or whose tick passed without being re-armed (a tick that failed for
   * good) is created or re-armed, invoking `targetArn`; the others are left alone. Nothing is deleted.
   */
  async repair(definition: WorkflowDefinition, targetArn: string): Promise<SyncResult> {
    return this.sync(definition, [], { Arn: targetArn, RoleArn: this.options.roleArn });
  }

  /**
   * After a tick: the schedule fires next at `next`. Read, then written whole (UpdateSchedule replaces
   * every field): its target stays as the registration made it.
   */
  async rearm(workflow: string, key: string, next: number): Promise<void> {
    const name = scheduleName(workflow, key);
    const existing = await this.get(name);
    if (!existing?.Target?.Arn || !existing.Target.RoleArn) {
      throw new Error(`schedule ${name} is missing or has no target: register the workflow again`);
    }
    await this.write('update', this.input(workflow, key, next, next, existing.Target));
  }

  private repairOf(
    workflow: string,
    key: string,
    schedule: ScheduleDefinition,
    existing: GetScheduleOutput,
    target: Target,
  ): { input: CreateScheduleInput; aheadMs?: number } | undefined {
    const now = this.clock();
    const armedFor = atTime(existing.ScheduleExpression);
    const pendingTick = tickOf(existing.Target?.Input);
    const stale = armedFor === undefined || armedFor < now - REPAIR_DELAY_MS;
    const aheadMs = this.aheadOf(schedule, pendingTick ?? armedFor, now);
    const retargeted = existing.Target?.Arn !== target.Arn || existing.Target?.RoleArn !== target.RoleArn;
    if (!stale && aheadMs === undefined && !retargeted && existing.State === 'ENABLED') return undefined;
    if (!stale && aheadMs === undefined && armedFor !== undefined && pendingTick !== undefined) {
      return { input: this.input(workflow, key, armedFor, pendingTick, target) };
    }
    // The tick it was armed for passed unhandled: fire soon, for that tick (its job and any missed
    // since). Armed ahead: for the next tick from now.
    const tick = (aheadMs === undefined ? pendingTick : undefined) ?? nextTick(schedule, now) ?? now;
    return {
      input: this.input(workflow, key, Math.max(tick, now + REPAIR_DELAY_MS), tick, target),
      aheadMs,
    };
  }

  /**
   * How far past the schedule's next tick `armedTick` is, when it is: a tick handled by a clock that
   * was ahead re-armed it for the tick after its own time. Ticks within a minute of now are
   * tolerated, as two functions' clocks may differ by that much.
   */
  private aheadOf(
    schedule: ScheduleDefinition,
    armedTick: number | undefined,
    now: number,
  ): number | undefined {
    if (armedTick === undefined) return undefined;
    const next = nextTick(schedule, now + REPAIR_DELAY_MS);
    return next !== undefined && armedTick > next ? armedTick - next : undefined;
  }

  /** The registration's target: the function and role of the environment. */
  private get target(): Target {
    return { Arn: this.options.targetArn, RoleArn: this.options.roleArn };
  }

  private input(
    workflow: string,
    key: string,
    fireAt: number,
    tick: number,
    to: Target,
  ): CreateScheduleInput {
    if (!to.Arn || !to.RoleArn) {
      throw new Error('SCHEDULE_TARGET_ARN is not set: this function cannot create schedules');
    }
    const event: ScheduleTickEvent = {
      switchyard: SCHEDULE_TICK,
      workflow,
      schedule: key,
      tick: new Date(tick).toISOString(),
    };
    return {
      Name: scheduleName(workflow, key),
      GroupName: this.options.group,
      Description: `switchyard: workflow ${workflow}`.slice(0, 512),
      ScheduleExpression: atExpression(fireAt),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      // Kept after it fires, to be re-armed for the next tick.
      ActionAfterCompletion: 'NONE',
      Target: {
        Arn: to.Arn,
        RoleArn: to.RoleArn,
        Input: JSON.stringify(event),
        RetryPolicy: RETRY_POLICY,
      },
    };
  }

  private async get(name: string): Promise<GetScheduleOutput | undefined> {
    try {
      return await this.client.send(new GetScheduleCommand({ Name: name, GroupName: this.options.group }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }

  private async write(kind: 'create' | 'update', input: CreateScheduleInput): Promise<void> {
    await this.client.send(
      kind === 'create' ? new CreateScheduleCommand(input) : new UpdateScheduleCommand(input),
    );
  }
}

/** Schedule names: letters, digits, `-`, `_`, `.`; at most 64 characters. */
const NAME_CHARS = /[^0-9A-Za-z_.-]/g;

/** `<workflow, at most 37 characters>-<8 hex digits of its SHA-256>-<schedule key>`. */
export function scheduleName(workflow: string, key: string): string {
  const hash = createHash('sha256').update(workflow).digest('hex').slice(0, 8);
  return `${workflow.replace(NAME_CHARS, '_').slice(0, 37)}-${hash}-${key}`;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, to the second. */
export function atExpression(ms: number): string {
  return `at(${new Date(ms).toISOString().slice(0, 19)})`;
}

function atTime(expression: string | undefined): number | undefined {
  const match = expression?.match(/^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/);
  return match ? Date.parse(`${match[1]}Z`) : undefined;
}

function tickOf(input: string | undefined): number | undefined {
  try {
    const event: unknown = JSON.parse(input ?? '');
    return isScheduleTickEvent(event) ? Date.parse(event.tick) : undefined;
  } catch {
    return undefined;
  }
}
