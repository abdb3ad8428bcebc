import { describe, expect, it } from 'vitest';
import type { ScheduleDefinition } from '../../../engine/definition/types.js';
import { scheduleKey, tickJobId } from '../../../engine/schedule/identity.js';
import type { ScheduleTickEvent } from '../../../functions/aws/schedule-tick-event.js';
import { createTimersHandler } from '../../../functions/handlers/timers.js';
import { type MemoryManager, memoryManager } from '../../support/memory-manager.js';

const at = (iso: string) => Date.parse(iso);

/** The timers function as EventBridge Scheduler invokes it, with the re-arms it asked for. */
async function deployed(schedule: ScheduleDefinition, now: string) {
  const harness = memoryManager({ start: at(now) });
  await harness.manager.registerWorkflow({
    name: 'report',
    steps: [{ name: 'build' }],
    schedules: [schedule],
  });
  const rearmed: string[] = [];
  const handler = createTimersHandler({
    manager: harness.manager,
    store: harness.store,
    timers: harness.timers,
    telemetry: harness.telemetry,
    clock: () => harness.now.value,
    scheduleTicks: {
      registry: harness.store,
      schedules: {
        rearm: async (workflow, key, next) => {
          expect([workflow, key]).toEqual(['report', scheduleKey(schedule)]);
          rearmed.push(new Date(next).toISOString());
        },
        repair: async () => ({ created: [], updated: [], deleted: [], unchanged: [], ahead: [] }),
      },
    },
  });
  const tick = (iso: string): ScheduleTickEvent => ({
    switchyard: 'schedule-tick',
    workflow: 'report',
    schedule: scheduleKey(schedule),
    tick: new Date(at(iso)).toISOString(),
  });
  return { harness, handler, tick, rearmed };
}

const jobIds = async (harness: MemoryManager) =>
  (await harness.store.queryJobs({ workflow: 'report', limit: 100 })).jobs.map((job) => job.id).sort();

describe('Handler: timers, a schedule tick from EventBridge Scheduler', () => {
  const DAILY = { cron: '30 2 * * *', timezone: 'Europe/Paris', input: { kind: 'daily' } };

  it('starts the tick’s job under its derived id and re-arms for the next tick, across spring forward', async () => {
    const { harness, handler, tick, rearmed } = await deployed(DAILY, '2026-03-28T01:30:00.200Z');
    await handler(tick('2026-03-28T01:30:00Z'));
    const id = tickJobId('report', scheduleKey(DAILY), at('2026-03-28T01:30:00Z'));
    expect(await jobIds(harness)).toEqual([id]);
    expect((await harness.store.getJob(id))?.input).toEqual({ kind: 'daily' });
    expect(harness.bus.sent.map((request) => request.jobId)).toEqual([id]);
    // 02:30 does not exist in Paris on 29 March: 03:00 CEST.
    expect(rearmed).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('an event delivered twice starts one job', async () => {
    const { harness, handler, tick, rearmed } = await deployed(DAILY, '2026-05-07T00:30:00Z');
    await handler(tick('2026-05-07T00:30:00Z'));
    harness.now.value += 5_000;
    await handler(tick('2026-05-07T00:30:00Z'));
    expect(await jobIds(harness)).toHaveLength(1);
    expect(harness.bus.sent).toHaveLength(1);
    expect(rearmed).toEqual(['2026-05-08T00:30:00.000Z', '2026-05-08T00:30:00.000Z']);
  });

  it('an event that comes late starts each tick missed since (catchUp: all) or the latest (latest)', async () => {
    const late = await deployed(DAILY, '2026-05-09T12:00:00Z');
    await late.handler(late.tick('2026-05-07T00:30:00Z'));
    expect(await jobIds(late.harness)).toEqual(
      ['2026-05-07T00:30:00Z', '2026-05-08T00:30:00Z', '2026-05-09T00:30:00Z']
        .map((tick) => tickJobId('report', scheduleKey(DAILY), at(tick)))
        .sort(),
    );
    expect(late.rearmed).toEqual(['2026-05-10T00:30:00.000Z']);

    const latest = { ...DAILY, catchUp: 'latest' as const };
    const once = await deployed(latest, '2026-05-09T12:00:00Z');
    await once.handler(once.tick('2026-05-07T00:30:00Z'));
    expect(await jobIds(once.harness)).toEqual([
      tickJobId('report', scheduleKey(latest), at('2026-05-09T00:30:00Z')),
    ]);
  });

  it('a tick of a schedule the workflow no longer has starts nothing and re-arms nothing', async () => {
    const { harness, handler, rearmed } = await deployed(DAILY, '2026-05-07T00:30:00Z');
    await handler({
      switchyard: 'schedule-tick',
      workflow: 'report',
      schedule: scheduleKey({ cron: '0 * * * *' }),
      tick: '2026-05-07T00:00:00.000Z',
    });
    expect(await jobIds(harness)).toEqual([]);
    expect(rearmed).toEqual([]);
  });
});
