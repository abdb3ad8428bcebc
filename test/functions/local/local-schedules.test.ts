import { describe, expect, it } from 'vitest';
import { definitionInNamespace } from '../../../engine/definition/namespace.js';
import { scheduleKey, tickJobId } from '../../../engine/schedule/identity.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { LocalSchedules, type ScheduleCursors } from '../../../functions/local/local-schedules.js';
import { type Logger, silentTelemetry } from '../../../functions/telemetry/telemetry.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { SimulatedWorld, workflowsFrom } from '../../support/simulated-world.js';

const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);

const workflow = (schedules: string) => `workflows:
  - name: report
    steps:
      - name: build
    schedules:
${schedules}`;
const DAILY = workflow(
  '      - cron: "0 6 * * *"\n        timezone: Europe/Paris\n        input: { kind: daily }\n',
);

async function world(yaml = DAILY) {
  const store = SqliteStore.open(':memory:');
  const sim = new SimulatedWorld(store);
  sim.now = at('2026-05-01T12:00:00Z');
  await sim.register(yaml);
  const host = (cursors: ScheduleCursors = store, logger: Logger = silentTelemetry.logger) =>
    new LocalSchedules({
      registry: store,
      cursors,
      startJob: (params) => sim.manager.startJob(params),
      logger,
      clock: () => sim.now,
    });
  const jobIds = async () =>
    (await store.queryJobs({ workflow: 'report', limit: 1000 })).jobs.map((job) => job.id).sort();
  return { store, sim, host, jobIds };
}

const dailyIds = (...ticks: string[]) => {
  const key = scheduleKey({ cron: '0 6 * * *', timezone: 'Europe/Paris', input: { kind: 'daily' } });
  return ticks.map((tick) => tickJobId('report', key, at(tick))).sort();
};

describe('LocalSchedules (serve)', () => {
  it('counts a new schedule from now, then starts each missed tick once under its derived id', async () => {
    const { sim, host, jobIds } = await world();
    const schedules = host();
    // Seen first at 12:00 on 1 May: the 06:00 tick of that day was before the schedule existed.
    expect(await schedules.pass()).toBe(at('2026-05-02T04:00:00Z'));
    expect(await jobIds()).toEqual([]);

    sim.now += 3 * DAY;
    await schedules.pass();
    expect(await jobIds()).toEqual(
      dailyIds('2026-05-02T04:00:00Z', '2026-05-03T04:00:00Z', '2026-05-04T04:00:00Z'),
    );
    const job = await sim.job(dailyIds('2026-05-02T04:00:00Z')[0] as string);
    expect([job.status, job.input]).toEqual(['running', { kind: 'daily' }]);

    // A timer firing twice, and a new host (a restart) at the same time: nothing more.
    await schedules.pass();
    await host().pass();
    expect(await jobIds()).toHaveLength(3);
  });

  it('a restart in the middle of a tick (jobs started, cursor not stored) starts no job twice', async () => {
    const { store, sim, host, jobIds } = await world();
    await host().pass();
    sim.now += 2 * DAY;
    const crashing: ScheduleCursors = {
      scheduleCursors: (name) => store.scheduleCursors(name),
      setScheduleCursor: async () => {
        throw new Error('the process died here');
      },
      capScheduleCursor: (name, key, at) => store.capScheduleCursor(name, key, at),
    };
    await expect(host(crashing).pass()).rejects.toThrow('the process died here');
    const before = await jobIds();
    expect(before).toEqual(dailyIds('2026-05-02T04:00:00Z', '2026-05-03T04:00:00Z'));

    await host().pass();
    expect(await jobIds()).toEqual(before);
    expect(sim.take()).toHaveLength(2);
  });

  it('catchUp: latest starts only the most recent missed tick', async () => {
    const { sim, host, jobIds } = await world(
      workflow('      - cron: "0 6 * * *"\n        catchUp: latest\n'),
    );
    await host().pass();
    sim.now += 5 * DAY;
    await host().pass();
    const key = scheduleKey({ cron: '0 6 * * *' });
    expect(await jobIds()).toEqual([tickJobId('report', key, at('2026-05-06T06:00:00Z'))]);
  });

  it('passes over the ticks of a disabled workflow, and counts an edited schedule from the edit', async () => {
    const { store, sim, host, jobIds } = await world();
    await host().pass();
    await store.setWorkflowEnabled('report', false);
    sim.now += 2 * DAY;
    await host().pass();
    await store.setWorkflowEnabled('report', true);
    sim.now += DAY / 2;
    await host().pass();
    expect(await jobIds()).toEqual([]);

    await sim.register(workflow('      - cron: "0 7 * * *"\n'));
    await host().pass();
    sim.now += DAY;
    await host().pass();
    expect(await jobIds()).toEqual([
      tickJobId('report', scheduleKey({ cron: '0 7 * * *' }), at('2026-05-04T07:00:00Z')),
    ]);
  });

  it('poke runs passes one at a time and arms a timer for the next tick', async () => {
    const { sim, host, jobIds } = await world();
    const schedules = host();
    await Promise.all([schedules.poke(), schedules.poke(), schedules.poke()]);
    sim.now += DAY;
    await Promise.all([schedules.poke(), schedules.poke()]);
    await schedules.stop();
    expect(await jobIds()).toHaveLength(1);
  });

  it('a cursor later than now (the clock moved back) is logged and capped at now: the next tick starts on time', async () => {
    // Prepare: a cursor a year ahead, as a clock that was a year fast would have left it.
    const { store, sim, host, jobIds } = await world();
    await host().pass();
    const key = scheduleKey({ cron: '0 6 * * *', timezone: 'Europe/Paris', input: { kind: 'daily' } });
    await store.setScheduleCursor('report', key, at('2027-05-01T12:00:00Z'));
    const telemetry = recordingTelemetry();

    // Act
    sim.now += 3_600_000;
    await host(store, telemetry.logger).pass();
    sim.now += DAY;
    await host().pass();

    // Assess
    const warnings = telemetry.logs.filter((log) => log.level === 'warn');
    expect(warnings).toEqual([
      {
        level: 'warn',
        message: 'schedules: the cursor is ahead of the clock (it moved back); counting from now',
        fields: {
          workflow: 'report',
          cron: '0 6 * * *',
          cursor: '2027-05-01T12:00:00.000Z',
          ahead: '364d23h',
          aheadMs: at('2027-05-01T12:00:00Z') - at('2026-05-01T13:00:00Z'),
        },
      },
    ]);
    expect(await jobIds()).toEqual(dailyIds('2026-05-02T04:00:00Z'));
    expect(await store.scheduleCursors('report')).toEqual(new Map([[key, sim.now]]));
  });

  it('after the clock moves back, the ticks the fast clock already started are not started again', async () => {
    // Prepare: the clock jumps two days ahead and the pass starts the ticks it sees as due.
    const { sim, host, jobIds } = await world();
    await host().pass();
    const real = sim.now;
    sim.now = real + 2 * DAY;
    await host().pass();
    const startedAhead = await jobIds();
    expect(startedAhead).toEqual(dailyIds('2026-05-02T04:00:00Z', '2026-05-03T04:00:00Z'));

    // Act: the clock is set right, then real time passes those ticks and one more.
    sim.now = real;
    await host().pass();
    sim.now = real + 3 * DAY;
    await host().pass();

    // Assess: each tick once, the new one included.
    expect(await jobIds()).toEqual(
      dailyIds('2026-05-02T04:00:00Z', '2026-05-03T04:00:00Z', '2026-05-04T04:00:00Z'),
    );
  });

  it('keys by the qualified name: the same workflow and schedule in two namespaces start their own jobs, with their own cursors', async () => {
    // Prepare: report in default (world()), and the same definition in team-a.
    const { store, sim, host, jobIds } = await world();
    for (const definition of workflowsFrom(DAILY))
      await sim.manager.registerWorkflow(definitionInNamespace(definition, 'team-a'));
    await host().pass();

    // Act
    sim.now += DAY;
    await host().pass();

    // Assess
    const key = scheduleKey({ cron: '0 6 * * *', timezone: 'Europe/Paris', input: { kind: 'daily' } });
    const tick = at('2026-05-02T04:00:00Z');
    const teamIds = (await store.queryJobs({ workflow: 'team-a/report', limit: 1000 })).jobs.map(
      (job) => job.id,
    );
    expect(await jobIds()).toEqual([tickJobId('report', key, tick)]);
    expect(teamIds).toEqual([tickJobId('team-a/report', key, tick)]);
    expect(teamIds[0]).not.toBe(tickJobId('report', key, tick));
    expect(await store.scheduleCursors('report')).toEqual(new Map([[key, sim.now]]));
    expect(await store.scheduleCursors('team-a/report')).toEqual(new Map([[key, sim.now]]));
  });
});
