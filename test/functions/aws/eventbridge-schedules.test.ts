import {
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleOutput,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { definitionInNamespace } from '../../../engine/definition/namespace.js';
import type { WorkflowDefinition } from '../../../engine/definition/types.js';
import { scheduleKey, tickJobId } from '../../../engine/schedule/identity.js';
import {
  atExpression,
  EventBridgeSchedules,
  scheduleName,
} from '../../../functions/aws/eventbridge-schedules.js';
import { syncWorkflowSchedules } from '../../../functions/aws/schedule-registration.js';
import { handleScheduleTick } from '../../../functions/aws/schedule-tick.js';
import type { ScheduleTickEvent } from '../../../functions/aws/schedule-tick-event.js';
import { createTimersHandler } from '../../../functions/handlers/timers.js';
import { silentTelemetry } from '../../../functions/telemetry/telemetry.js';
import { aLambdaContext, aScheduledEvent } from '../../support/aws-events.js';
import { memoryManager } from '../../support/memory-manager.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const GROUP = 'Switchyard-schedules';
const ROLE = 'arn:aws:iam::123456789012:role/Switchyard-SchedulerInvoke';
const TARGET = 'arn:aws:lambda:eu-west-1:123456789012:function:Switchyard-Timers';
const NOW = Date.parse('2026-05-07T12:00:00Z'); // a Thursday

const DAILY = { cron: '0 6 * * 1-5', timezone: 'Europe/Paris', input: { kind: 'daily' } };
const HOURLY = { cron: '0 * * * *' };
const report = (...schedules: WorkflowDefinition['schedules'] & object): WorkflowDefinition => ({
  name: 'report',
  steps: [{ name: 'build' }],
  ...(schedules.length ? { schedules } : {}),
});

/**
 * EventBridge Scheduler, simulated on the mocked client: the schedules of the group by name, as
 * Create, Update and Delete leave them; Get answers from it (ResourceNotFoundException when absent).
 */
function simulatedScheduler() {
  const mock = mockClient(SchedulerClient);
  const schedules = new Map<string, CreateScheduleInput>();
  const notFound = (name?: string) =>
    new ResourceNotFoundException({
      message: `Schedule ${name} does not exist.`,
      Message: `Schedule ${name} does not exist.`,
      $metadata: {},
    });
  mock.on(GetScheduleCommand).callsFake((input: { Name: string }) => {
    const found = schedules.get(input.Name);
    if (!found) throw notFound(input.Name);
    return { ...found, Arn: `arn:aws:scheduler:::schedule/${GROUP}/${input.Name}` } as GetScheduleOutput;
  });
  mock.on(CreateScheduleCommand).callsFake((input: CreateScheduleInput) => {
    schedules.set(input.Name as string, input);
    return { ScheduleArn: 'arn' };
  });
  mock.on(UpdateScheduleCommand).callsFake((input: CreateScheduleInput) => {
    if (!schedules.has(input.Name as string)) throw notFound(input.Name);
    schedules.set(input.Name as string, input);
    return { ScheduleArn: 'arn' };
  });
  mock.on(DeleteScheduleCommand).callsFake((input: { Name: string }) => {
    if (!schedules.delete(input.Name)) throw notFound(input.Name);
    return {};
  });
  return { mock, schedules };
}

const eventOf = (schedule: CreateScheduleInput | undefined) =>
  JSON.parse(schedule?.Target?.Input ?? 'null') as ScheduleTickEvent;

describe('EventBridgeSchedules: a workflow’s schedules on EventBridge Scheduler', () => {
  let scheduler: ReturnType<typeof simulatedScheduler>;
  let now: number;
  const schedules = () =>
    new EventBridgeSchedules({
      client: new SchedulerClient({ region: 'eu-west-1' }),
      group: GROUP,
      roleArn: ROLE,
      targetArn: TARGET,
      clock: () => now,
    });

  beforeEach(() => {
    scheduler?.mock.restore();
    scheduler = simulatedScheduler();
    now = NOW;
  });

  it('creates one at() schedule per entry, for its next tick computed in its time zone', async () => {
    const result = await schedules().sync(report(DAILY, HOURLY), []);
    const daily = scheduleName('report', scheduleKey(DAILY));
    const hourly = scheduleName('report', scheduleKey(HOURLY));
    expect(result).toEqual({ created: [daily, hourly], updated: [], deleted: [], unchanged: [], ahead: [] });
    expect(scheduler.schedules.get(daily)).toMatchObject({
      GroupName: GROUP,
      ScheduleExpression: 'at(2026-05-08T04:00:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'NONE',
      State: 'ENABLED',
      Target: { Arn: TARGET, RoleArn: ROLE },
    });
    expect(eventOf(scheduler.schedules.get(daily))).toEqual({
      switchyard: 'schedule-tick',
      workflow: 'report',
      schedule: scheduleKey(DAILY),
      tick: '2026-05-08T04:00:00.000Z',
    });
    expect(scheduler.schedules.get(hourly)?.ScheduleExpression).toBe('at(2026-05-07T13:00:00)');
  });

  it('as the definition changes: keeps what stays, creates what is new, deletes what went', async () => {
    await schedules().sync(report(DAILY, HOURLY), []);
    const weekly = { cron: '0 8 * * 1' };
    const result = await schedules().sync(report(DAILY, weekly), [scheduleKey(DAILY), scheduleKey(HOURLY)]);
    expect(result).toEqual({
      created: [scheduleName('report', scheduleKey(weekly))],
      updated: [],
      deleted: [scheduleName('report', scheduleKey(HOURLY))],
      unchanged: [scheduleName('report', scheduleKey(DAILY))],
      ahead: [],
    });
    expect([...scheduler.schedules.keys()].sort()).toEqual(
      [scheduleName('report', scheduleKey(DAILY)), scheduleName('report', scheduleKey(weekly))].sort(),
    );
    // No schedules left: every one is deleted; deleting one already gone is no error.
    const emptied = await schedules().sync(report(), [
      scheduleKey(DAILY),
      scheduleKey(HOURLY),
      scheduleKey(weekly),
    ]);
    expect(emptied.deleted).toHaveLength(2);
    expect(scheduler.schedules.size).toBe(0);
  });

  it('updates a schedule that targets another function, and one whose tick passed without being re-armed', async () => {
    await schedules().sync(report(DAILY, HOURLY), []);
    const daily = scheduleName('report', scheduleKey(DAILY));
    const hourly = scheduleName('report', scheduleKey(HOURLY));
    scheduler.schedules.set(daily, {
      ...(scheduler.schedules.get(daily) as CreateScheduleInput),
      Target: { ...scheduler.schedules.get(daily)?.Target, Arn: `${TARGET}-old`, RoleArn: ROLE },
    });
    // Two hours later, the hourly one still waits for 13:00: that invocation failed for good.
    now = NOW + 2 * 3_600_000;
    const result = await schedules().sync(report(DAILY, HOURLY), [scheduleKey(DAILY), scheduleKey(HOURLY)]);
    expect(result.updated.sort()).toEqual([daily, hourly].sort());
    expect(scheduler.schedules.get(daily)?.Target?.Arn).toBe(TARGET);
    expect(scheduler.schedules.get(daily)?.ScheduleExpression).toBe('at(2026-05-08T04:00:00)');
    // It fires a minute from now, for the tick it missed: the handler starts it (and those since).
    expect(scheduler.schedules.get(hourly)?.ScheduleExpression).toBe(atExpression(now + 60_000));
    expect(eventOf(scheduler.schedules.get(hourly)).tick).toBe('2026-05-07T13:00:00.000Z');
  });

  it('re-arms for its next tick a schedule a clock that was ahead armed past it, and the registration warns', async () => {
    // Prepare: the hourly schedule's last tick was handled by a clock a day fast: armed for 13:00 tomorrow.
    await schedules().sync(report(DAILY, HOURLY), []);
    const hourly = scheduleName('report', scheduleKey(HOURLY));
    const tomorrow = Date.parse('2026-05-08T13:00:00Z');
    scheduler.schedules.set(hourly, {
      ...(scheduler.schedules.get(hourly) as CreateScheduleInput),
      ScheduleExpression: atExpression(tomorrow),
      Target: {
        ...scheduler.schedules.get(hourly)?.Target,
        Input: JSON.stringify({
          ...eventOf(scheduler.schedules.get(hourly)),
          tick: new Date(tomorrow).toISOString(),
        }),
      } as CreateScheduleInput['Target'],
    });
    const world = new SimulatedWorld();
    await world.manager.registerWorkflow(report(DAILY, HOURLY));
    const telemetry = recordingTelemetry();

    // Act: the workflow registered again, 30 minutes later (12:30, real time).
    now = NOW + 30 * 60_000;
    await syncWorkflowSchedules(world.store, schedules(), report(DAILY, HOURLY), telemetry.logger);

    // Assess: armed for 13:00 today, for that tick; the daily one left as it was.
    expect(scheduler.schedules.get(hourly)?.ScheduleExpression).toBe('at(2026-05-07T13:00:00)');
    expect(eventOf(scheduler.schedules.get(hourly)).tick).toBe('2026-05-07T13:00:00.000Z');
    expect(scheduler.schedules.get(scheduleName('report', scheduleKey(DAILY)))?.ScheduleExpression).toBe(
      'at(2026-05-08T04:00:00)',
    );
    expect(telemetry.logs.filter((log) => log.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: 'schedules: armed past its next tick by a clock that was ahead; re-armed for its next tick',
        fields: { workflow: 'report', schedule: hourly, ahead: '1d', aheadMs: 24 * 3_600_000 },
      },
    ]);
  });

  it('leaves alone a schedule re-armed by a clock a little ahead of the registering one', async () => {
    // Prepare: the 13:00 tick handled at 13:00:00.05 re-armed it for 14:00.
    await schedules().sync(report(HOURLY), []);
    await schedules().rearm('report', scheduleKey(HOURLY), Date.parse('2026-05-07T14:00:00Z'));

    // Act: registered again by a function whose clock reads 12:59:59.9.
    now = Date.parse('2026-05-07T12:59:59.900Z');
    const result = await schedules().sync(report(HOURLY), [scheduleKey(HOURLY)]);

    // Assess
    expect(result.unchanged).toEqual([scheduleName('report', scheduleKey(HOURLY))]);
    expect(result.ahead).toEqual([]);
  });

  it('re-arms a schedule for its next tick, keeping the target the registration gave it', async () => {
    await schedules().sync(report(DAILY), []);
    const rearming = new EventBridgeSchedules({
      client: new SchedulerClient({ region: 'eu-west-1' }),
      group: GROUP,
      roleArn: ROLE,
      clock: () => now,
    });
    await rearming.rearm('report', scheduleKey(DAILY), Date.parse('2026-05-11T04:00:00Z'));
    const daily = scheduler.schedules.get(scheduleName('report', scheduleKey(DAILY)));
    expect(daily?.ScheduleExpression).toBe('at(2026-05-11T04:00:00)');
    expect(daily?.Target).toMatchObject({ Arn: TARGET, RoleArn: ROLE });
    expect(eventOf(daily).tick).toBe('2026-05-11T04:00:00.000Z');
    await expect(rearming.rearm('report', scheduleKey(HOURLY), NOW)).rejects.toThrow(
      'register the workflow again',
    );
  });

  it('the repair sweep (every 10th minute, at :05) re-arms a schedule whose tick failed for good, and creates a missing one', async () => {
    // Prepare: report's two schedules registered at 12:00; the hourly tick at 13:00 failed every
    // Lambda retry (nothing re-armed it), and the daily schedule was deleted by hand.
    const harness = memoryManager({ start: NOW });
    await harness.manager.registerWorkflow(report(DAILY, HOURLY));
    await schedules().sync(report(DAILY, HOURLY), []);
    const daily = scheduleName('report', scheduleKey(DAILY));
    const hourly = scheduleName('report', scheduleKey(HOURLY));
    scheduler.schedules.delete(daily);
    const sweep = (at: string) => {
      now = Date.parse(at);
      harness.now.value = now;
      const timers = createTimersHandler({
        ...harness,
        clock: () => harness.now.value,
        scheduleTicks: { registry: harness.store, schedules: schedules() },
      });
      return timers(aScheduledEvent(new Date(now)), aLambdaContext(60_000, 'Switchyard-Timers'));
    };

    // Act: the sweeps of 13:04 (no repair) and 13:05.
    await sweep('2026-05-07T13:04:00Z');
    const before = [...scheduler.schedules.keys()];
    await sweep('2026-05-07T13:05:00Z');

    // Assess: the hourly one fires a minute later for the tick it missed; the daily one is back,
    // invoking the timers function as the sweep was invoked.
    expect(before).toEqual([hourly]);
    expect(scheduler.schedules.get(hourly)?.ScheduleExpression).toBe('at(2026-05-07T13:06:00)');
    expect(eventOf(scheduler.schedules.get(hourly)).tick).toBe('2026-05-07T13:00:00.000Z');
    expect(scheduler.schedules.get(daily)?.ScheduleExpression).toBe('at(2026-05-08T04:00:00)');
    expect(scheduler.schedules.get(daily)?.Target?.Arn).toBe(
      aLambdaContext(1, 'Switchyard-Timers').invokedFunctionArn,
    );
    expect(harness.telemetry.logged('timer sweep').at(-1)?.fields).toMatchObject({ repaired: 2 });
  });

  it('names schedules within 64 characters, apart for workflows whose names differ only past the cut', () => {
    const long = 'a'.repeat(60);
    const a = scheduleName(`${long}-one`, scheduleKey(DAILY));
    const b = scheduleName(`${long}-two`, scheduleKey(DAILY));
    expect(a.length).toBeLessThanOrEqual(64);
    expect(a).not.toBe(b);
    expect(scheduleName('ns/report:x', scheduleKey(DAILY))).toMatch(/^[0-9A-Za-z_.-]+$/);
  });

  it('through the registration path: each version registered syncs, deleting the schedules of earlier versions', async () => {
    const world = new SimulatedWorld();
    const sync = (definition: WorkflowDefinition) =>
      syncWorkflowSchedules(world.store, schedules(), definition, silentTelemetry.logger);
    const held: string[][] = [];
    for (const definition of [report(DAILY, HOURLY), report(HOURLY), report(DAILY), report()]) {
      await world.manager.registerWorkflow(definition);
      await sync(definition);
      held.push([...scheduler.schedules.keys()]);
    }
    const [daily, hourly] = [DAILY, HOURLY].map((schedule) => scheduleName('report', scheduleKey(schedule)));
    expect(held).toEqual([[daily, hourly], [hourly], [daily], []]);
  });

  it('keys by the qualified name: the same workflow and schedule in two namespaces get their own schedules and tick jobs', async () => {
    // Prepare: report registered (as the API and the deploy register it) in default and in team-a.
    const world = new SimulatedWorld();
    world.now = now;
    const definitions = [report(DAILY), definitionInNamespace(report(DAILY), 'team-a')];
    for (const definition of definitions) {
      await world.manager.registerWorkflow(definition);
      await syncWorkflowSchedules(world.store, schedules(), definition, silentTelemetry.logger);
    }

    // Act: each schedule's tick arrives.
    const events = [...scheduler.schedules.values()].map(eventOf);
    for (const event of events) {
      await handleScheduleTick(event, {
        registry: world.store,
        startJob: (params) => world.manager.startJob(params),
        schedules: schedules(),
        logger: silentTelemetry.logger,
        clock: () => now,
      });
    }

    // Assess
    const key = scheduleKey(DAILY);
    const tick = Date.parse('2026-05-08T04:00:00Z');
    expect([...scheduler.schedules.keys()].sort()).toEqual(
      [scheduleName('report', key), scheduleName('team-a/report', key)].sort(),
    );
    expect(events.map((event) => [event.workflow, event.tick]).sort()).toEqual([
      ['report', '2026-05-08T04:00:00.000Z'],
      ['team-a/report', '2026-05-08T04:00:00.000Z'],
    ]);
    for (const workflow of ['report', 'team-a/report']) {
      const jobs = (await world.store.queryJobs({ workflow, limit: 10 })).jobs.map((job) => job.id);
      expect(jobs, workflow).toEqual([tickJobId(workflow, key, tick)]);
    }
    expect(tickJobId('report', key, tick)).not.toBe(tickJobId('team-a/report', key, tick));
  });
});
