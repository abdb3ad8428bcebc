import { describe, expect, it } from 'vitest';
import type { JobQuery, JobRecord, Store } from '../../engine/index.js';
import { aChild, aJob, aWorkflow, creating, updating, uuid } from '../support/factories.js';

/**
 * Search on the server (GET /api/jobs): each store answers the same filters (listed status with
 * `waiting` and `pending`, creation and end ranges, error text, search attributes) with the same
 * jobs, newest first, and pages through them with its cursor.
 */
export function describeSearchContract(current: () => Store): void {
  describe('search (listed statuses, ranges, error text, search attributes)', () => {
    const all = async (store: Store, query: JobQuery, limit = 2): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.queryJobs({ ...query, limit, cursor });
        expect(page.jobs.length).toBeLessThanOrEqual(limit);
        ids.push(...page.jobs.map((job) => job.id));
        cursor = page.cursor;
      } while (cursor);
      return ids;
    };

    it('lists a job waiting for someone as waiting, and one not started as pending, in lists and counts', async () => {
      const store = current();
      const workflow = `search-${uuid()}`;
      const running = aJob({ workflow, createdAt: 1_000 });
      const waiting = aJob({ workflow, createdAt: 2_000, waitsForSomeone: true });
      const pending = aJob({ workflow, createdAt: 3_000, status: 'waiting' });
      await store.commit([creating(running), creating(waiting), creating(pending)]);
      expect(await all(store, { workflow, status: 'waiting' })).toEqual([waiting.id]);
      expect(await all(store, { workflow, status: 'pending' })).toEqual([pending.id]);
      expect(await all(store, { workflow, status: 'running' })).toEqual([running.id]);
      expect(await store.countJobs(workflow)).toMatchObject({ running: 1, waiting: 1, pending: 1 });

      // The signal came: the job runs again, and moves across lists and counts.
      const resumed: JobRecord = { ...waiting, rev: 2, waitsForSomeone: undefined };
      delete resumed.waitsForSomeone;
      await store.commit([updating(waiting, resumed)]);
      expect(await all(store, { workflow, status: 'waiting' })).toEqual([]);
      expect(await all(store, { workflow, status: 'running' })).toEqual([waiting.id, running.id]);
      expect(await store.countJobs(workflow)).toMatchObject({ running: 2, waiting: 0, pending: 1 });

      // A paused job that waits is paused, not waiting.
      const paused: JobRecord = { ...running, rev: 2, status: 'paused', waitsForSomeone: true, pausedAt: 5 };
      await store.commit([updating(running, paused)]);
      expect(await all(store, { workflow, status: 'waiting' })).toEqual([]);
      expect(await all(store, { workflow, status: 'paused' })).toEqual([running.id]);
    });

    it('filters by search attributes, alone and with status and other attributes, newest first in pages', async () => {
      const store = current();
      const workflow = `attrs-${uuid()}`;
      const customer = `c-${uuid().slice(0, 8)}`;
      const jobs = Array.from({ length: 7 }, (_, n) =>
        aJob({
          workflow,
          createdAt: 10_000 + n * 10,
          waitsForSomeone: n % 2 === 0 ? true : undefined,
          attributes: { customer: n < 5 ? customer : 'someone-else', region: n % 3 === 0 ? 'eu' : 'us' },
        }),
      );
      const other = aJob({ workflow: `other-${uuid()}`, createdAt: 10_025, attributes: { customer } });
      // A search across workflows looks at registered workflows' jobs (as the API lists them).
      for (const name of [workflow, other.workflow]) await store.saveWorkflow(aWorkflow(name), 1);
      await store.commit([...jobs.map((job) => creating(job)), creating(other)]);
      const newestFirst = (picked: number[]) => picked.map((n) => jobs[n]?.id);

      expect(await all(store, { workflow, attributes: { customer } })).toEqual(newestFirst([4, 3, 2, 1, 0]));
      expect(await all(store, { attributes: { customer } }, 3)).toEqual([
        jobs[4]?.id,
        jobs[3]?.id,
        other.id,
        jobs[2]?.id,
        jobs[1]?.id,
        jobs[0]?.id,
      ]);
      expect(await all(store, { workflow, status: 'waiting', attributes: { customer } })).toEqual(
        newestFirst([4, 2, 0]),
      );
      expect(await all(store, { workflow, attributes: { customer, region: 'eu' } })).toEqual(
        newestFirst([3, 0]),
      );
      expect(await all(store, { workflow, attributes: { customer: 'nobody' } })).toEqual([]);
      expect(await all(store, { workflow, attributes: { nothing: customer } })).toEqual([]);
    });

    it('filters by creation and end time ranges and by error text', async () => {
      const store = current();
      const workflow = `ranges-${uuid()}`;
      const failed = (n: number, message: string): JobRecord =>
        aJob({
          workflow,
          createdAt: 20_000 + n * 10,
          status: 'failed',
          endedAt: 30_000 + n * 10,
          error: { step: n % 2 ? 'charge' : 'ship', attempt: 1, message, at: 30_000 + n * 10 },
        });
      const jobs = [
        failed(0, 'Card DECLINED by the bank'),
        failed(1, 'timeout after 30s'),
        failed(2, 'card declined'),
        failed(3, 'address unknown'),
      ];
      const running = aJob({ workflow, createdAt: 20_015 });
      await store.commit([...jobs.map((job) => creating(job)), creating(running)]);
      const ids = (picked: (JobRecord | undefined)[]) => picked.map((job) => job?.id);

      expect(await all(store, { workflow, createdAfter: 20_010, createdBefore: 20_030 })).toEqual(
        ids([jobs[2], running, jobs[1]]),
      );
      expect(await all(store, { workflow, endedSince: 30_010, endedBefore: 30_030 })).toEqual(
        ids([jobs[2], jobs[1]]),
      );
      expect(await all(store, { workflow, errorContains: 'card declined' })).toEqual(ids([jobs[2], jobs[0]]));
      expect(await all(store, { workflow, errorContains: 'CHARGE' })).toEqual(ids([jobs[3], jobs[1]]));
      expect(
        await all(store, { workflow, status: 'failed', errorContains: 'declined', createdAfter: 20_005 }),
      ).toEqual(ids([jobs[2]]));
    });

    it('keeps a page stable when listed jobs change between pages (a batch cancel)', async () => {
      const store = current();
      const workflow = `stable-${uuid()}`;
      const jobs = Array.from({ length: 5 }, (_, n) => aJob({ workflow, createdAt: 40_000 + n }));
      await store.commit(jobs.map((job) => creating(job)));
      const first = await store.queryJobs({ workflow, status: 'running', limit: 2 });
      expect(first.jobs.map((job) => job.id)).toEqual([jobs[4]?.id, jobs[3]?.id]);
      for (const job of first.jobs) {
        await store.commit([updating(job, { ...job, rev: 2, status: 'cancelled', endedAt: 50_000 })]);
      }
      const second = await store.queryJobs({ workflow, status: 'running', limit: 2, cursor: first.cursor });
      expect(second.jobs.map((job) => job.id)).toEqual([jobs[2]?.id, jobs[1]?.id]);
    });

    it('deletes a job’s search attributes with it (retention)', async () => {
      const store = current();
      const workflow = `attr-retention-${uuid()}`;
      const customer = `c-${uuid().slice(0, 8)}`;
      const done = aJob({ workflow, status: 'completed', endedAt: 1_000, attributes: { customer } });
      const child = aChild(done, 'fan', 0, { workflow, status: 'completed', endedAt: 900 });
      await store.commit([creating(done, { creates: [child] })]);
      expect(await all(store, { attributes: { customer } })).toEqual([done.id]);
      await store.deleteFinishedJobs(2_000);
      expect(await all(store, { attributes: { customer } })).toEqual([]);
    });
  });
}
