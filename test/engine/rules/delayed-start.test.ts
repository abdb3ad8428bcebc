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
