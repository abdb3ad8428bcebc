import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JobRecord, StepRequest, Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import type { Manager } from '../../../functions/manager/manager.js';
import { memoryManager, type RecordingBus } from '../../support/memory-manager.js';

/**
 * maxRunning under random interleavings of starts, completions, cancels, duplicated replies and
 * crashes (engine/job/running-limit.ts). A crash is a manager that commits and dies before it
 * carries out its outbox (its pump never runs); recovery is a fresh manager replaying the outbox,
 * which may carry out again what a live manager already did.
 */

type Via = 'live' | 'other' | 'crashing';
type Action =
  | { kind: 'start'; via: Via }
  | { kind: 'reply'; pick: number; via: Via }
  | { kind: 'cancel'; pick: number; via: Via }
  | { kind: 'recover' }
  | { kind: 'together'; first: Action; second: Action };

const via = fc.constantFrom<Via>('live', 'other', 'crashing');
const simple: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('start' as const), via }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('reply' as const), pick: fc.nat(), via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(), via }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
);
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: simple },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('together' as const), first: simple, second: simple }),
  },
);

class World {
  readonly live: Manager;
  readonly other: Manager;
  readonly sent: StepRequest[] = [];
  readonly ids: string[] = [];
  /** Each job's place in the queue, as seen while it was queued. */
  readonly seqOf = new Map<string, number>();
  private readonly buses: RecordingBus[] = [];

  constructor(
    readonly store: Store,
    readonly max: number,
  ) {
    this.live = this.manager();
    this.other = this.manager();
  }

  /** A manager on the world's store; `crashing`: one that dies after each commit, its outbox left undone. */
  manager(crashing = false): Manager {
    const { manager, bus } = memoryManager({ store: this.store });
    this.buses.push(bus);
    if (crashing) manager.stop();
    return manager;
  }

  requests(): StepRequest[] {
    return this.buses.flatMap((bus) => bus.sent);
  }

  async run(step: Action): Promise<void> {
    if (step.kind === 'together') {
      await Promise.all([this.run(step.first), this.run(step.second)]);
      return;
    }
    if (step.kind === 'recover') {
      const fresh = this.manager();
      await fresh.recover();
      await fresh.drain();
      fresh.stop();
      return;
    }
    const manager =
      step.via === 'crashing' ? this.manager(true) : step.via === 'live' ? this.live : this.other;
    if (step.kind === 'start') {
      const { job } = await manager.startJob({ workflow: 'limited', input: {} });
      this.ids.push(job.id);
    } else if (step.kind === 'reply') {
      const requests = this.requests();
      const request = requests[step.pick % Math.max(1, requests.length)];
      if (request) await manager.handleReplies([{ correlationId: request.correlationId, body: '{}' }]);
    } else if (this.ids.length) {
      await manager.cancel(this.ids[step.pick % this.ids.length] as string).catch(() => undefined);
    }
    if (step.via !== 'crashing') await manager.drain();
  }

  async jobs(): Promise<JobRecord[]> {
    const found = await this.store.getJobs(this.ids);
    return this.ids.map((id) => found.get(id) as JobRecord);
  }

  /** What must hold whenever no manager is in the middle of something. */
  async checkInvariants(): Promise<void> {
    const jobs = await this.jobs();
    const running = jobs.filter((job) => job.status === 'running' || job.status === 'paused');
    const queued = jobs.filter((job) => job.status === 'queued');
    expect(running.length).toBeLessThanOrEqual(this.max);
    expect(running.every((job) => job.holdsSlot)).toBe(true);
    const count = await this.store.getRunningCount('limited');
    expect(count.running).toBe(running.length);
    expect(count.queued).toBe(queued.length);
    const listed = await this.store.listQueued('limited', 1000);
    const bySeq = [...queued].sort((a, b) => (a.queueSeq ?? 0) - (b.queueSeq ?? 0));
    expect(listed.map((entry) => entry.jobId)).toEqual(bySeq.map((job) => job.id));
    for (const job of queued) this.seqOf.set(job.id, job.queueSeq as number);
    // Queue order: a job that left the queue by starting passed over no job still queued before it.
    const lowestQueued = Math.min(...queued.map((job) => job.queueSeq as number));
    for (const job of jobs) {
      const seq = this.seqOf.get(job.id);
      if (seq === undefined || job.status === 'queued' || job.status === 'cancelled') continue;
      expect(seq).toBeLessThan(lowestQueued);
    }
  }

  /** After recovery, replying to every running job ends all of them: no queued job is stranded. */
  async finish(): Promise<void> {
    const fresh = this.manager();
    await fresh.recover();
    await fresh.drain();
    for (let round = 0; round < this.ids.length + 2; round++) {
      const running = new Set(
        (await this.jobs()).filter((job) => job.status === 'running').map((job) => job.id),
      );
      if (!running.size) break;
      const replies = this.requests().filter((request) => running.has(request.jobId));
      await fresh.handleReplies(
        replies.map((request) => ({ correlationId: request.correlationId, body: '{}' })),
      );
      await fresh.drain();
      await this.checkInvariants();
    }
    fresh.stop();
    const jobs = await this.jobs();
    expect(jobs.filter((job) => job.status !== 'completed' && job.status !== 'cancelled')).toEqual([]);
    expect(await this.store.getRunningCount('limited')).toMatchObject({ running: 0, queued: 0 });
  }
}

describe.each([
  ['memory', (): Store => new MemoryStore()],
  ['SQLite', (): Store => SqliteStore.open(':memory:')],
])('Property: maxRunning (%s store)', (_name, open) => {
  it('never runs more than N, keeps the queue in order, and strands no queued job, whatever the interleaving and crashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(action, { minLength: 1, maxLength: 30 }),
        async (max, actions) => {
          const world = new World(open(), max);
          await world.live.registerWorkflow({ name: 'limited', maxRunning: max, steps: [{ name: 'work' }] });
          for (const step of actions) {
            await world.run(step);
            await world.checkInvariants();
          }
          await world.finish();
          world.live.stop();
          world.other.stop();
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);
});
