import { describe, expect, it } from 'vitest';
import type { JobRecord, Store, TreeChange } from '../../engine/index.js';
import { aChild, aJob, creating, updating } from '../support/factories.js';

/**
 * The bounded-trees part of the Store contract (engine/job/tree-quota.ts): a tree's count written with
 * the commit that adds to it, only within its quota and while its root is as the commit saw it; exact
 * under racing managers. `another` opens another store on the same data (another process), where the
 * adapter allows one (else it is the same store).
 */
export function describeTreeQuotaContract(current: () => Store, another: () => Promise<Store>): void {
  describe('bounded job trees', () => {
    const grows = (
      root: JobRecord,
      add: number,
      max: number,
      rootState: TreeChange['rootState'] = 'open',
    ) => ({
      tree: { root: root.id, add, max, rootState },
    });
    /** The commit of a child of `root` that fans out to `count` grandchildren. */
    const fanningOut = (child: JobRecord, count: number, tree: { tree: TreeChange }) => {
      const next = { ...child, rev: child.rev + 1, seq: 1 };
      const creates = Array.from({ length: count }, (_, index) => aChild(child, 'fan', index));
      return { next, creates, commit: updating(child, next, { creates, ...tree }) };
    };

    it('reads a tree nothing was counted in as empty, with its root as stored', async () => {
      const store = current();
      const root = aJob();
      expect(await store.getTree(root.id)).toEqual({ size: 0, rootStatus: undefined });
      await store.commit([creating(root)]);
      expect(await store.getTree(root.id)).toEqual({ size: 0, rootStatus: 'running' });
    });

    it('counts jobs with the commit that adds them, up to the quota; past it, the commit writes nothing', async () => {
      const store = current();
      const root = aJob();
      const child = aChild(root, 'fan', 0);
      // The root's own commit: counted, its own status not checked (it is the commit's condition).
      expect(await store.commit([creating(root, { creates: [child], ...grows(root, 4, 6) })])).toEqual([
        { ok: true },
      ]);
      const fits = fanningOut(child, 2, grows(root, 2, 6));
      expect(await store.commit([fits.commit])).toEqual([{ ok: true }]);
      expect(await store.getTree(root.id)).toEqual({ size: 6, rootStatus: 'running' });

      const over = fanningOut(fits.next, 1, grows(root, 1, 6));
      expect(await store.commit([over.commit])).toEqual([{ ok: false, conflict: true }]);
      expect(await store.getJob(child.id)).toEqual(fits.next);
      expect(await store.getJob(over.creates[0]?.id as string)).toBeUndefined();
      expect((await store.getTree(root.id)).size).toBe(6);
      // More than the quota alone: refused whatever the count.
      const alone = aJob();
      expect(await store.commit([creating(alone, grows(alone, 7, 6))])).toEqual([
        { ok: false, conflict: true },
      ]);
      expect(await store.getJob(alone.id)).toBeUndefined();
    });

    it("refuses a descendant's new jobs once its root is paused or ended, and takes a commit resting on that", async () => {
      const store = current();
      const root = aJob();
      const child = aChild(root, 'fan', 0);
      await store.commit([creating(root, { creates: [child], ...grows(root, 1, 100) })]);
      const paused = { ...root, rev: 2, status: 'paused' as const };
      await store.commit([updating(root, paused)]);

      const refused = fanningOut(child, 2, grows(root, 2, 100));
      expect(await store.commit([refused.commit])).toEqual([{ ok: false, conflict: true }]);
      expect(await store.getJob(refused.creates[0]?.id as string)).toBeUndefined();
      const followed = { ...child, rev: 2, status: 'paused' as const };
      expect(await store.commit([updating(child, followed, grows(root, 0, 100, 'ended'))])).toEqual([
        { ok: false, conflict: true },
      ]);
      expect(await store.commit([updating(child, followed, grows(root, 0, 100, 'paused'))])).toEqual([
        { ok: true },
      ]);

      await store.commit([updating(paused, { ...paused, rev: 3, status: 'cancelled', endedAt: 2_000 })]);
      const cancelled = { ...followed, rev: 3, status: 'cancelled' as const };
      expect(await store.commit([updating(followed, cancelled, grows(root, 0, 100, 'paused'))])).toEqual([
        { ok: false, conflict: true },
      ]);
      expect(await store.commit([updating(followed, cancelled, grows(root, 0, 100, 'ended'))])).toEqual([
        { ok: true },
      ]);
      expect(await store.getTree(root.id)).toEqual({ size: 1, rootStatus: 'cancelled' });
    });

    it('creates a called job of a tree only while its root is open', async () => {
      const store = current();
      const root = aJob();
      await store.commit([creating(root)]);
      const called = aJob({ treeRoot: root.id });
      expect(await store.commit([creating(called, grows(root, 0, 10))])).toEqual([{ ok: true }]);
      await store.commit([updating(root, { ...root, rev: 2, status: 'failed', endedAt: 2_000 })]);
      const late = aJob({ treeRoot: root.id });
      expect(await store.commit([creating(late, grows(root, 0, 10))])).toEqual([
        { ok: false, conflict: true },
      ]);
      expect(await store.getJob(late.id)).toBeUndefined();
      expect(await store.getJob(called.id)).toEqual(called);
    });

    it('counts a fan-out of more children than one transaction holds, and refuses it whole past the quota', async () => {
      const store = current();
      const root = aJob();
      await store.commit([creating(root)]);
      const first = Array.from({ length: 150 }, (_, index) => aChild(root, 'fan', index));
      const next = { ...root, rev: 2 };
      expect(
        await store.commit([updating(root, next, { creates: first, ...grows(root, 150, 200) })]),
      ).toEqual([{ ok: true }]);
      const second = Array.from({ length: 120 }, (_, index) => aChild(root, 'more', index));
      expect(
        await store.commit([
          updating(next, { ...next, rev: 3 }, { creates: second, ...grows(root, 120, 200) }),
        ]),
      ).toEqual([{ ok: false, conflict: true }]);
      expect((await store.listChildren(root.id, 'more', { limit: 10 })).children).toEqual([]);
      expect((await store.listChildren(root.id, 'fan', { limit: 200 })).children).toHaveLength(150);
      expect(await store.getTree(root.id)).toEqual({ size: 150, rootStatus: 'running' });
    });

    it('never counts past the quota when managers race to grow one tree', async () => {
      const store = current();
      const stores = [store, await another(), await another()];
      const root = aJob();
      const children = Array.from({ length: 12 }, (_, index) => aChild(root, 'fan', index));
      await store.commit([creating(root, { creates: children, ...grows(root, 12, 18) })]);
      // Every child fans out to one grandchild at once, each through its own store: 6 fit.
      const results = await Promise.all(
        children.map((child, n) =>
          (stores[n % stores.length] as Store).commit([fanningOut(child, 1, grows(root, 1, 18)).commit]),
        ),
      );
      expect(results.filter(([result]) => result?.ok)).toHaveLength(6);
      expect(await store.getTree(root.id)).toEqual({ size: 18, rootStatus: 'running' });
      const grandchildren = await Promise.all(
        children.map(
          async (child) => (await store.listChildren(child.id, 'fan', { limit: 10 })).children.length,
        ),
      );
      expect(grandchildren.reduce((sum, count) => sum + count, 0)).toBe(6);
    });

    it("deletes a tree's count with its root", async () => {
      const store = current();
      const root = aJob({ status: 'completed', endedAt: 1_000 });
      const child = aChild(root, 'fan', 0, { status: 'completed', endedAt: 1_000 });
      await store.commit([creating(root, { creates: [child], ...grows(root, 1, 10) })]);
      expect((await store.getTree(root.id)).size).toBe(1);
      await store.deleteFinishedJobs(5_000);
      expect(await store.getTree(root.id)).toEqual({ size: 0, rootStatus: undefined });
    });
  });
}
