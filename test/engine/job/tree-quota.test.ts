import { describe, expect, it } from 'vitest';
import { applyEvent, createJob } from '../../../engine/index.js';
import {
  quotaRefusal,
  rootStateOf,
  rootStatusesOf,
  type TreeChange,
  type TreeGrowth,
  treeChangeAllowed,
  treeChangeOf,
  treeRootOf,
} from '../../../engine/job/tree-quota.js';
import { compiled, T0 } from '../../support/simulated-world.js';

const ROOT = 'root-job';
const change = (overrides: Partial<TreeChange> = {}): TreeChange => ({
  root: ROOT,
  add: 3,
  max: 10,
  rootState: 'open',
  ...overrides,
});
const growth = (overrides: Partial<TreeGrowth> = {}): TreeGrowth => ({
  job: { id: 'child', root: ROOT },
  created: false,
  add: 0,
  createsJobs: false,
  followedRoot: false,
  rootState: 'open',
  max: 10,
  ...overrides,
});

describe('Rule: bounded job trees (engine/job/tree-quota.ts)', () => {
  describe('Function: rootStateOf and rootStatusesOf', () => {
    it('takes a paused root as paused, a finished or deleted one as ended, every other as open', () => {
      expect(rootStateOf('running')).toBe('open');
      expect(rootStateOf('waiting')).toBe('open');
      expect(rootStateOf('paused')).toBe('paused');
      expect(rootStateOf('cancelled')).toBe('ended');
      expect(rootStateOf('failed')).toBe('ended');
      expect(rootStateOf(undefined)).toBe('ended');
      expect(rootStatusesOf('paused')).toEqual(['paused']);
      expect(rootStatusesOf('ended').sort()).toEqual(['aborted', 'cancelled', 'completed', 'failed']);
      expect(rootStatusesOf('open').sort()).toEqual(['queued', 'running', 'scheduled', 'waiting']);
    });
  });

  describe('Function: treeRootOf', () => {
    it("is a called job's caller's root, else the job's own top-level job", () => {
      expect(treeRootOf({ root: 'called', treeRoot: ROOT })).toBe(ROOT);
      expect(treeRootOf({ root: ROOT })).toBe(ROOT);
    });
  });

  describe('Function: treeChangeAllowed', () => {
    it('lets a tree grow up to its quota, and no further', () => {
      expect(treeChangeAllowed({ size: 7, rootStatus: 'running' }, change(), 'child')).toBe(true);
      expect(treeChangeAllowed({ size: 8, rootStatus: 'running' }, change(), 'child')).toBe(false);
      expect(treeChangeAllowed({ size: 0, rootStatus: 'running' }, change({ add: 11 }), 'child')).toBe(false);
    });

    it('refuses a descendant a root that is paused or ended, whatever the room left', () => {
      for (const rootStatus of ['paused', 'cancelled', 'failed', undefined] as const)
        expect(treeChangeAllowed({ size: 0, rootStatus }, change(), 'child'), String(rootStatus)).toBe(false);
    });

    it("checks the root's state the commit rested on: a job that followed its paused root", () => {
      const paused = change({ add: 0, rootState: 'paused' });
      expect(treeChangeAllowed({ size: 10, rootStatus: 'paused' }, paused, 'child')).toBe(true);
      expect(treeChangeAllowed({ size: 10, rootStatus: 'running' }, paused, 'child')).toBe(false);
    });

    it("leaves the root's own status to its own commit, and counts its jobs all the same", () => {
      expect(treeChangeAllowed({ size: 0, rootStatus: undefined }, change(), ROOT)).toBe(true);
      expect(treeChangeAllowed({ size: 8, rootStatus: 'running' }, change(), ROOT)).toBe(false);
    });
  });

  describe('Function: quotaRefusal', () => {
    it('names the root, the size it would reach and the quota, and the setting', () => {
      expect(quotaRefusal(ROOT, 7, 3, 10)).toBeUndefined();
      expect(quotaRefusal(ROOT, 8, 3, 10)).toBe(
        'the tree of job root-job would hold 11 jobs under its root (3 more), over its quota of 10 ' +
          '(a setting of the manager: serve --max-tree-jobs, deployed MAX_TREE_JOBS)',
      );
    });
  });

  describe('Function: treeChangeOf', () => {
    it("carries the root's own commit only when it counts jobs", () => {
      const own = { id: ROOT, root: ROOT };
      expect(treeChangeOf(growth({ job: own, createsJobs: true }))).toBeUndefined();
      expect(treeChangeOf(growth({ job: own, add: 4, createsJobs: true }))).toEqual(change({ add: 4 }));
    });

    it("carries a descendant's commit that counts or creates jobs, or creates the descendant itself", () => {
      expect(treeChangeOf(growth())).toBeUndefined();
      expect(treeChangeOf(growth({ add: 2 }))).toEqual(change({ add: 2 }));
      // A later slice of a fan-out counted when it started: created under an open root.
      expect(treeChangeOf(growth({ createsJobs: true }))).toEqual(change({ add: 0 }));
      const called = { id: 'called', root: 'called', treeRoot: ROOT };
      expect(treeChangeOf(growth({ job: called, created: true }))).toEqual(change({ add: 0 }));
    });

    it('rests the commit of a job that followed its root on the state it followed', () => {
      expect(treeChangeOf(growth({ followedRoot: true, rootState: 'paused' }))).toEqual(
        change({ add: 0, rootState: 'paused' }),
      );
      expect(treeChangeOf(growth({ followedRoot: true, rootState: 'ended' }))).toEqual(
        change({ add: 0, rootState: 'ended' }),
      );
    });
  });

  describe('Function: applyEvent, on a tree read again after a refused commit', () => {
    const fan = compiled(`workflows:
  - name: fan
    steps:
      - name: first
      - name: spread
        task: each
        depends: [ first ]
    tasks:
      - name: each
        itemListKey: items
        steps:
          - name: work
          - name: more
            depends: [ work ]
`);
    const ID = '0b7c6c52-5b5e-4f0e-9d3e-2c1f4a9e8d70';

    it("starts a root's children running when the root resumes, whatever its status as read", () => {
      const root = createJob(fan, { id: ID, input: { items: [1, 2] } }, { now: T0 });
      const paused = applyEvent(fan, root.job, { type: 'pause' }, { now: T0 }).job;
      const replied = applyEvent(
        fan,
        paused,
        { type: 'reply', step: 'first', output: { items: [1, 2] } },
        { now: T0 },
      );
      const tree = { size: 0, rootStatus: 'paused' as const };
      const resumed = applyEvent(fan, replied.job, { type: 'resume' }, { now: T0, tree });
      expect(resumed.job.status).toBe('running');
      expect(resumed.creates.map((child) => child.status)).toEqual(['running', 'running']);
      expect(resumed.tree).toEqual({ root: ID, add: 2, max: 1_000_000, rootState: 'open' });
    });

    it('pauses a descendant of a paused root before its event, and cancels one of an ended root', () => {
      const root = createJob(fan, { id: ID, input: { items: [1] } }, { now: T0 });
      const replied = applyEvent(
        fan,
        root.job,
        { type: 'reply', step: 'first', output: { items: [1] } },
        { now: T0 },
      );
      const [child] = replied.creates as [NonNullable<(typeof replied.creates)[0]>];
      const reply = { type: 'reply' as const, step: 'work', output: { done: true } };

      const underPaused = applyEvent(fan, child, reply, { now: T0, tree: { size: 1, rootStatus: 'paused' } });
      expect(underPaused.job.status).toBe('paused');
      expect(underPaused.requests).toEqual([]);
      expect(underPaused.tree).toEqual({ root: ID, add: 0, max: 1_000_000, rootState: 'paused' });

      const underEnded = applyEvent(fan, child, reply, {
        now: T0,
        tree: { size: 1, rootStatus: 'cancelled' },
      });
      expect(underEnded.job.status).toBe('cancelled');
      expect(underEnded.tree).toEqual({ root: ID, add: 0, max: 1_000_000, rootState: 'ended' });
    });

    it('refuses to create a called job under an ended root, and creates one paused under a paused root', () => {
      const params = { id: ID, input: {}, treeRoot: 'the-root' };
      const refused = createJob(fan, params, { now: T0, tree: { size: 3, rootStatus: 'failed' } });
      expect(refused.changed).toBe(false);
      expect(refused.rejected?.message).toBe(
        'job the-root, the root of its tree, has ended (failed): the tree takes no new jobs',
      );
      const held = createJob(fan, params, { now: T0, tree: { size: 3, rootStatus: 'paused' } });
      expect(held.job).toMatchObject({ status: 'paused', treeRoot: 'the-root' });
      expect(held.requests).toEqual([]);
      expect(held.tree).toEqual({ root: 'the-root', add: 0, max: 1_000_000, rootState: 'paused' });
    });
  });
});
