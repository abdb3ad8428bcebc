import { describe, expect, it } from 'vitest';
import type { Bus, JobRecord, StepRequest, Store, TimerScheduler } from '../../engine/index.js';
import type { LimitChange } from '../../engine/job/running-limit.js';
import { Manager } from '../../functions/manager/manager.js';
import { aJob, creating, updating, uuid } from '../support/factories.js';

/** A manager on `store` whose bus keeps what it is sent (one per simulated process). */
function managerOn(store: Store, sent: StepRequest[]): Manager {
  const bus: Bus = {
    send: async (requests) => {
      sent.push(...requests);
    },
    ensureQueues: async () => {},
    ping: async () => {},
    close: async () => {},
  };
  const timers: TimerScheduler = { arm: async () => {}, disarm: async () => {} };
  return new Manager({ store, bus, timers });
}

const limited = (name: string, max: number) => ({ name, maxRunning: max, steps: [{ name: 'work' }] });

/**
 * The `maxRunning` part of the Store contract (engine/job/running-limit.ts): counters and queue
 * written with the job's commit, only when their condition holds; exact under racing managers.
 * `another` opens another store on the same data (another process), where the adapter allows one.
 */
export function describeMaxRunningContract(
  current: () => Store,
  another: (() => Promise<Store>) | undefined,
): void {
  describe('maxRunning counters and queue', () => {
    const queuedJob = (workflow: string, seq: number): JobRecord =>
      aJob({ workflow, status: 'queued', queueSeq: seq, steps: [] });

    it('reads zero counters and an empty queue for a workflow that never had a limit', async () => {
      const store = current();
      expect(await store.getRunningCount(`none-${uuid()}`)).toEqual({ running: 0, queued: 0, nextSeq: 0 });
      expect(await store.listQueued(`none-${uuid()}`, 10)).toEqual([]);
    });

    it('takes, queues, promotes, dequeues and releases with the job, and lists the queue in order', async () => {
      const store = current();
      const workflow = `limit-${uuid()}`;
      const take: LimitChange = { op: 'take', workflow, max: 1 };
      const first = aJob({ workflow, holdsSlot: true });
      expect(await store.commit([creating(first, { limit: take })])).toEqual([{ ok: true }]);
      const queued = [0, 1, 2].map((seq) => queuedJob(workflow, seq));
      for (const [seq, job] of queued.entries()) {
        const enqueue: LimitChange = { op: 'enqueue', workflow, max: 1, seq, jobId: job.id };
        expect(await store.commit([creating(job, { limit: enqueue })])).toEqual([{ ok: true }]);
      }
      expect(await store.getRunningCount(workflow)).toEqual({ running: 1, queued: 3, nextSeq: 3 });
      expect(await store.listQueued(workflow, 2)).toEqual([
        { jobId: queued[0]?.id, seq: 0 },
        { jobId: queued[1]?.id, seq: 1 },
      ]);

      const ended = { ...first, rev: 2, status: 'completed' as const, holdsSlot: undefined };
      await store.commit([updating(first, ended, { limit: { op: 'release', workflow } })]);
      const [a, b, c] = queued as [JobRecord, JobRecord, JobRecord];
      const cancelled = { ...b, rev: 2, status: 'cancelled' as const, queueSeq: undefined };
      await store.commit([updating(b, cancelled, { limit: { op: 'dequeue', workflow, seq: 1 } })]);
      const promoted = {
        ...a,
        rev: 2,
        status: 'running' as const,
        queueSeq: undefined,
        holdsSlot: true as const,
      };
      expect(
        await store.commit([updating(a, promoted, { limit: { op: 'promote', workflow, max: 1, seq: 0 } })]),
      ).toEqual([{ ok: true }]);
      expect(await store.getRunningCount(workflow)).toEqual({ running: 1, queued: 1, nextSeq: 3 });
      expect(await store.listQueued(workflow, 10)).toEqual([{ jobId: c.id, seq: 2 }]);
      expect((await store.getJob(a.id))?.status).toBe('running');
    });

    it('writes nothing, and answers a conflict, when the counters refuse the change', async () => {
      const store = current();
      const workflow = `refused-${uuid()}`;
      const holder = aJob({ workflow, holdsSlot: true });
      await store.commit([creating(holder, { limit: { op: 'take', workflow, max: 1 } })]);
      // A new job that would take a slot already taken: not created.
      const late = aJob({ workflow, holdsSlot: true });
      expect(await store.commit([creating(late, { limit: { op: 'take', workflow, max: 1 } })])).toEqual([
        { ok: false, conflict: true },
      ]);
      expect(await store.getJob(late.id)).toBeUndefined();
      // Queued at a place another job took meanwhile: not created.
      const waiting = queuedJob(workflow, 0);
      await store.commit([
        creating(waiting, { limit: { op: 'enqueue', workflow, max: 1, seq: 0, jobId: waiting.id } }),
      ]);
      const stale = queuedJob(workflow, 0);
      expect(
        await store.commit([
          creating(stale, { limit: { op: 'enqueue', workflow, max: 1, seq: 0, jobId: stale.id } }),
        ]),
      ).toEqual([{ ok: false, conflict: true }]);
      expect(await store.getJob(stale.id)).toBeUndefined();
      // Promoted while every slot is taken: the job stays as it was.
      const promoted = {
        ...waiting,
        rev: 2,
        status: 'running' as const,
        queueSeq: undefined,
        holdsSlot: true as const,
      };
      expect(
        await store.commit([
          updating(waiting, promoted, { limit: { op: 'promote', workflow, max: 1, seq: 0 } }),
        ]),
      ).toEqual([{ ok: false, conflict: true }]);
      expect(await store.getJob(waiting.id)).toEqual(waiting);
      expect(await store.getRunningCount(workflow)).toEqual({ running: 1, queued: 1, nextSeq: 1 });
      expect(await store.listQueued(workflow, 10)).toEqual([{ jobId: waiting.id, seq: 0 }]);
    });

    it('starts the next queued job after a crash between a job’s end and its follow-up: recovery carries it out', async () => {
      const store = current();
      const sent: StepRequest[] = [];
      const workflow = `crash-${uuid()}`;
      const first = managerOn(store, sent);
      await first.registerWorkflow(limited(workflow, 1));
      const running = (await first.startJob({ workflow, input: {} })).job;
      const queued = (await first.startJob({ workflow, input: {} })).job;
      await first.drain();
      expect(queued.status).toBe('queued');
      // A manager that dies right after its commit: its outbox (the follow-up) is never carried out.
      const dying = managerOn(store, sent);
      dying.stop();
      const request = sent.find((r) => r.jobId === running.id) as StepRequest;
      await dying.handleReplies([{ correlationId: request.correlationId, body: '{}' }]);
      expect((await store.getJob(running.id))?.status).toBe('completed');
      expect((await store.getJob(queued.id))?.status).toBe('queued');

      // Another process recovers the outbox, as serve on start or the timers handler's sweep does.
      const recovering = managerOn(another ? await another() : store, sent);
      await recovering.recover();
      await recovering.drain();
      expect((await store.getJob(queued.id))?.status).toBe('running');
      expect(await store.getRunningCount(workflow)).toMatchObject({ running: 1, queued: 0 });
      for (const manager of [first, recovering]) manager.stop();
    });

    it('never runs more than N when managers race to start and end jobs, and starts the queue in order', async () => {
      const store = current();
      const stores = [store, ...(another ? [await another(), await another()] : [])];
      const sent: StepRequest[] = [];
      const managers = [0, 1, 2].map((n) => managerOn(stores[n % stores.length] as Store, sent));
      const workflow = `race-${uuid()}`;
      const max = 3;
      await managers[0]?.registerWorkflow(limited(workflow, max));
      const starts = Array.from({ length: 12 }, (_, n) =>
        (managers[n % managers.length] as Manager).startJob({ workflow, input: { n } }),
      );
      const ids = (await Promise.all(starts)).map(({ job }) => job.id);
      await Promise.all(managers.map((manager) => manager.drain()));
      const order = (await store.listQueued(workflow, 100)).map((queued) => queued.jobId);
      expect(order).toHaveLength(ids.length - max);

      const runningNow = async () => {
        const jobs = await store.getJobs(ids);
        return ids.filter((id) => jobs.get(id)?.status === 'running');
      };
      const answered = new Set<string>();
      for (let round = 0; round < 20; round++) {
        const running = await runningNow();
        expect(running.length).toBeLessThanOrEqual(max);
        expect((await store.getRunningCount(workflow)).running).toBe(running.length);
        // The jobs still queued are the last ones of the queue's order: none was passed over.
        const queued = (await store.listQueued(workflow, 100)).map((entry) => entry.jobId);
        expect(queued).toEqual(order.slice(order.length - queued.length));
        if (!running.length) break;
        // Every running job replies at once, each to a different manager.
        const replies = sent.filter(
          (request) => running.includes(request.jobId) && !answered.has(request.jobId),
        );
        for (const request of replies) answered.add(request.jobId);
        await Promise.all(
          replies.map((request, n) =>
            (managers[n % managers.length] as Manager).handleReplies([
              { correlationId: request.correlationId, body: '{}' },
            ]),
          ),
        );
        await Promise.all(managers.map((manager) => manager.drain()));
      }
      const final = await store.getJobs(ids);
      expect(ids.map((id) => final.get(id)?.status)).toEqual(ids.map(() => 'completed'));
      expect(await store.getRunningCount(workflow)).toMatchObject({ running: 0, queued: 0 });
      for (const manager of managers) manager.stop();
    });
  });
}
