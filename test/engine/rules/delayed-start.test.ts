import { describe, expect, it } from 'vitest';
import { timerId } from '../../../engine/index.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOW = `workflows:
  - name: later
    timeout: 1h
    steps:
      - name: send
`;

async function scheduled(delayMs: number) {
  const world = new SimulatedWorld();
  await world.register(WORKFLOW);
  const startAt = world.now + delayMs;
  const { job } = await world.manager.startJob({ workflow: 'later', input: { to: 'x' }, startAt });
  await world.manager.drain();
  return { world, id: job.id, startAt };
}

describe('Rules: delayed starts (`?at=`)', () => {
  it('a job started for later is scheduled, sends nothing, and starts when its time comes', async () => {
    const { world, id, startAt } = await scheduled(60_000);
    const job = await world.job(id);
    expect([job.status, job.startAt]).toEqual(['scheduled', startAt]);
    expect(world.take()).toEqual([]);
    expect([...world.timers.values()]).toEqual([
      { jobId: id, step: null, kind: 'start', attempt: 0, at: startAt },
    ]);

    await world.advance(59_999);
    expect((await world.job(id)).status).toBe('scheduled');
    await world.advance(1);
    const started = await world.job(id);
    expect(started.status).toBe('running');
    // The job's own deadline replaces the start timer, from the start.
    expect(started.deadline).toBe(startAt + 3_600_000);
    expect(world.take().map((request) => [request.step, request.body])).toEqual([['send', { to: 'x' }]]);
  });

  it('a start timer that fires twice, or early, starts the job once', async () => {
    const { world, id, startAt } = await scheduled(60_000);
    const timer = { jobId: id, step: null, kind: 'start' as const, attempt: 0, at: startAt };
    await world.manager.fireTimers([timer]);
    expect((await world.job(id)).status).toBe('scheduled');
    await world.advance(60_000);
    await world.manager.fireTimers([timer]);
    await world.manager.drain();
    expect(world.take()).toHaveLength(1);
  });

  it('a time already past starts the job at once', async () => {
    const { world, id } = await scheduled(0);
    expect((await world.job(id)).status).toBe('running');
    expect(world.take()).toHaveLength(1);
  });

  it('cancelling a scheduled job ends it and clears its start timer; pausing it is refused', async () => {
    const { world, id } = await scheduled(60_000);
    await expect(world.manager.pause(id)).rejects.toThrow(ManagerError);
    const cancelled = await world.manager.cancel(id);
    await world.manager.drain();
    expect(cancelled.status).toBe('cancelled');
    expect(world.timers.has(timerId({ jobId: id, step: null }))).toBe(false);
    await world.advance(120_000);
    expect((await world.job(id)).status).toBe('cancelled');
    expect(world.take()).toEqual([]);
  });
});

describe('Rules: a delayed start under maxRunning', () => {
  const LIMITED = `workflows:
  - name: limited
    maxRunning: 1
    steps:
      - name: send
`;

  it('comes due while the slot is taken: it waits as queued, and starts when the running job ends', async () => {
    // Prepare: one job holds the only slot; another is scheduled for a minute later.
    const world = new SimulatedWorld();
    await world.register(LIMITED);
    const first = await world.start('limited', { n: 1 });
    const [firstRequest] = world.take();
    const { job } = await world.manager.startJob({
      workflow: 'limited',
      input: { n: 2 },
      startAt: world.now + 60_000,
    });
    await world.manager.drain();

    // Act: its time comes while the first still runs, then the first completes.
    await world.advance(60_000);
    const due = await world.job(job.id);
    const sentWhileFull = world.take();
    await world.reply(firstRequest as (typeof sentWhileFull)[number]);
    const promoted = await world.job(job.id);

    // Assess
    expect(due.status).toBe('queued');
    expect(sentWhileFull).toEqual([]);
    expect((await world.job(first)).status).toBe('completed');
    expect([promoted.status, promoted.holdsSlot]).toEqual(['running', true]);
    expect(world.take().map((request) => [request.step, request.body])).toEqual([['send', { n: 2 }]]);
    expect(await world.store.getRunningCount('limited')).toMatchObject({ running: 1, queued: 0 });
  });

  it('comes due with a slot free: it takes the slot, so a job started after it queues', async () => {
    // Prepare
    const world = new SimulatedWorld();
    await world.register(LIMITED);
    const { job } = await world.manager.startJob({
      workflow: 'limited',
      input: { n: 1 },
      startAt: world.now + 60_000,
    });
    await world.manager.drain();

    // Act
    await world.advance(60_000);
    const later = await world.start('limited', { n: 2 });

    // Assess
    expect((await world.job(job.id)).holdsSlot).toBe(true);
    expect((await world.job(later)).status).toBe('queued');
  });
});
