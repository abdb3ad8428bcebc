import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FollowUp,
  type JobRecord,
  type OutboxEntry,
  PersistentList,
  type Store,
} from '../../engine/index.js';
import type { StoredToken } from '../../engine/ports/store.js';
import {
  aFanInitWithEveryField,
  aJobWithEveryField,
  aNamespaceSettingsWithEveryField,
  aRequestWithEveryField,
  aTokenWithEveryField,
  everyOutboxEntry,
  everyTimer,
} from '../support/every-field.js';
import {
  aChild,
  aJob,
  aRequest,
  aWorkflow,
  creating,
  type JobOverrides,
  requestEntry,
  updating,
  uuid,
} from '../support/factories.js';
import { describeAuditLogContract } from './store-contract-audit-log.js';
import { describeDeliveryLogContract } from './store-contract-deliveries.js';
import { describeMaxRunningContract } from './store-contract-max-running.js';
import { describeNamespaceSettingsContract } from './store-contract-namespaces.js';
import { describeRepliesInHandContract } from './store-contract-replies-in-hand.js';
import { describeSearchContract } from './store-contract-search.js';
import { describeTreeQuotaContract } from './store-contract-tree-quota.js';

export interface StoreUnderTest {
  store: Store;
  /** Releases what the store holds (files, emulator tables). */
  cleanup(): Promise<void>;
  /** Another store on the same data, as another process would open it (where the adapter allows one). */
  another?: () => Promise<Store>;
  /**
   * A store that lets settled deliveries go through a TTL (DynamoDB) rather than at once: when the
   * delivery's item expires (epoch seconds), or undefined when it does not.
   */
  deliveryExpiry?: (id: string) => Promise<number | undefined>;
}

/**
 * The behaviour every `Store` must have. Each adapter's test file calls this with a factory for a
 * fresh, empty store.
 */
export function describeStoreContract(
  name: string,
  open: () => Promise<StoreUnderTest>,
  options: { timeout?: number } = {},
): void {
  describe(`Store contract: ${name}`, { timeout: options.timeout ?? 30_000 }, () => {
    let subject: StoreUnderTest;
    let store: Store;
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    describe('workflows', () => {
      it('numbers versions: an identical definition keeps its version, a different one makes the next', async () => {
        const definition = aWorkflow();
        expect(await store.saveWorkflow(definition, 1_000)).toEqual({ version: 1, created: true });
        expect(await store.saveWorkflow(structuredClone(definition), 2_000)).toEqual({
          version: 1,
          created: false,
        });
        const changed = { ...definition, description: 'changed' };
        expect(await store.saveWorkflow(changed, 3_000)).toEqual({ version: 2, created: true });
        expect((await store.getWorkflow(definition.name))?.definition).toEqual(changed);
        expect((await store.getWorkflow(definition.name, 1))?.definition).toEqual(definition);
        expect(await store.getWorkflow(definition.name, 3)).toBeUndefined();
        expect(await store.getWorkflow('no-such-workflow')).toBeUndefined();
        const summary = (await store.listWorkflows()).find((w) => w.name === definition.name);
        expect(summary).toMatchObject({ latestVersion: 2, enabled: true, description: 'changed' });
        expect(summary?.versions).toEqual([
          { version: 1, createdAt: 1_000 },
          { version: 2, createdAt: 3_000 },
        ]);
      });

      it('disables and enables a workflow; saving enables it', async () => {
        const definition = aWorkflow();
        await store.saveWorkflow(definition, 1_000);
        expect(await store.setWorkflowEnabled(definition.name, false)).toBe(true);
        expect((await store.getWorkflow(definition.name))?.enabled).toBe(false);
        expect((await store.getWorkflow(definition.name, 1))?.enabled).toBe(false);
        await store.saveWorkflow(definition, 2_000);
        expect((await store.getWorkflow(definition.name))?.enabled).toBe(true);
        expect(await store.setWorkflowEnabled('no-such-workflow', false)).toBe(false);
      });
    });

    describe('jobs', () => {
      it('creates a job once and reads it back unchanged', async () => {
        const job = aJob({ input: { text: 'héllo', nested: { list: [1, 2, { a: null }] } } });
        expect(await store.commit([creating(job)])).toEqual([{ ok: true }]);
        expect(await store.getJob(job.id)).toEqual(job);
        expect(await store.commit([creating({ ...job, input: {} })])).toEqual([
          { ok: false, conflict: true },
        ]);
        expect(await store.getJob(job.id)).toEqual(job);
        expect(await store.getJob(uuid())).toBeUndefined();
      });

      it('updates only from the expected revision, and a refused commit writes nothing', async () => {
        const job = aJob();
        await store.commit([creating(job)]);
        const next: JobRecord = {
          ...job,
          rev: 2,
          updatedAt: 2_000,
          seq: 1,
          steps: job.steps.with(0, {
            name: 'a',
            status: 'completed',
            attempts: 1,
            firstAttempt: 1,
            output: { out: 1 },
            seq: 1,
            endedAt: 2_000,
          }),
        };
        const stale: JobRecord = { ...next, status: 'failed' };
        expect(await store.commit([updating(job, next)])).toEqual([{ ok: true }]);
        const refused = updating(job, stale, {
          outbox: [requestEntry(stale, 'refused-entry')],
          timers: [
            { op: 'set', timer: { jobId: job.id, step: 'a', kind: 'attempt', attempt: 1, at: 5_000 } },
          ],
          creates: [aChild(job, 'a', 0)],
        });
        expect(await store.commit([refused])).toEqual([{ ok: false, conflict: true }]);
        expect(await store.getJob(job.id)).toEqual(next);
        const outbox = await store.pendingOutbox({ limit: 10_000 });
        expect(outbox.entries.map((entry) => entry.id)).not.toContain('refused-entry');
        expect((await store.listTimers({ limit: 10_000 })).filter((t) => t.jobId === job.id)).toEqual([]);
        expect((await store.listChildren(job.id, 'a', { limit: 10 })).children).toEqual([]);
      });

      it('removes fields a transition cleared', async () => {
        const job = aJob({ deadline: 9_000, error: { step: 'a', attempt: 1, message: 'x', at: 1 } });
        await store.commit([creating(job)]);
        const { deadline: _deadline, error: _error, ...rest } = job;
        const next: JobRecord = { ...rest, rev: 2 };
        await store.commit([updating(job, next)]);
        expect(await store.getJob(job.id)).toEqual(next);
      });

      it('applies each commit of a call on its own', async () => {
        const a = aJob();
        const b = aJob();
        await store.commit([creating(a)]);
        const results = await store.commit([creating(a), creating(b)]);
        expect(results).toEqual([{ ok: false, conflict: true }, { ok: true }]);
        expect(await store.getJob(b.id)).toEqual(b);
        const both = await store.getJobs([a.id, b.id, uuid()]);
        expect([...both.keys()].sort()).toEqual([a.id, b.id].sort());
      });

      it('lets exactly one of many concurrent writers from the same revision win', async () => {
        const job = aJob();
        await store.commit([creating(job)]);
        const attempts = Array.from({ length: 8 }, (_, n) =>
          store.commit([updating(job, { ...job, rev: 2, input: { writer: n } })]),
        );
        const results = (await Promise.all(attempts)).flat();
        expect(results.filter((result) => result.ok)).toHaveLength(1);
        expect((await store.getJob(job.id))?.rev).toBe(2);
      });

      it('stores large outputs whole', async () => {
        const big = { blob: 'x'.repeat(900_000), list: Array.from({ length: 20_000 }, (_, i) => i) };
        const job = aJob({
          result: big,
          steps: [{ name: 'a', status: 'completed', attempts: 1, firstAttempt: 1, output: big }],
        });
        await store.commit([creating(job)]);
        expect(await store.getJob(job.id)).toEqual(job);
      });
    });

    describe('children and fan-out counters', () => {
      it('creates children only when absent and lists them in index order, in pages', async () => {
        const parent = aJob();
        const children = Array.from({ length: 25 }, (_, index) => aChild(parent, 'fan', index));
        await store.commit([creating(parent, { creates: [...children].reverse() })]);
        const next = { ...parent, rev: 2 };
        const changedChild = { ...(children[0] as JobRecord), input: { changed: true } };
        await store.commit([updating(parent, next, { creates: [changedChild] })]);
        expect(await store.getJob(changedChild.id)).toEqual(children[0]);

        const first = await store.listChildren(parent.id, 'fan', { limit: 10 });
        expect(first.children.map((child) => child.parent?.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(first.nextIndex).toBe(10);
        const rest = await store.listChildren(parent.id, 'fan', { fromIndex: 20, limit: 10 });
        expect(rest.children.map((child) => child.parent?.index)).toEqual([20, 21, 22, 23, 24]);
        expect(rest.nextIndex).toBeUndefined();
        expect((await store.listChildren(parent.id, 'other', { limit: 10 })).children).toEqual([]);
      });

      it("refuses a commit whose child takes another job's id, names those ids, and writes nothing of it", async () => {
        const topLevel = aJob();
        const otherParent = aJob();
        const otherChild = aChild(otherParent, 'fan', 0);
        await store.commit([creating(topLevel), creating(otherParent, { creates: [otherChild] })]);
        const parent = aJob();
        const fresh = aChild(parent, 'fan', 2);
        const refused = creating(parent, {
          creates: [
            aChild(parent, 'fan', 0, { id: topLevel.id }),
            aChild(parent, 'fan', 1, { id: otherChild.id }),
            fresh,
          ],
          outbox: [requestEntry(parent, `${parent.id}:refused`)],
          fanInits: [{ parentId: parent.id, step: 'fan', total: 3, done: 0, failed: 0 }],
        });
        const beside = aJob();
        const [result, besideResult] = await store.commit([refused, creating(beside)]);
        expect(besideResult).toEqual({ ok: true });
        expect(await store.getJob(beside.id)).toEqual(beside);
        expect(result?.ok).toBe(false);
        expect(result && !result.ok && !result.conflict && [...result.taken].sort()).toEqual(
          [topLevel.id, otherChild.id].sort(),
        );
        expect(await store.getJob(parent.id)).toBeUndefined();
        expect(await store.getJob(fresh.id)).toBeUndefined();
        expect(await store.getJob(topLevel.id)).toEqual(topLevel);
        expect(await store.getJob(otherChild.id)).toEqual(otherChild);
        const pending = await store.pendingOutbox({ limit: 5000 });
        expect(pending.entries.filter((entry) => entry.jobId === parent.id)).toEqual([]);
      });

      it("refuses an update whose children (more than a transaction holds) take another job's id", async () => {
        const other = aJob();
        await store.commit([creating(other)]);
        const parent = aJob();
        await store.commit([creating(parent)]);
        const children = Array.from({ length: 120 }, (_, index) =>
          aChild(parent, 'fan', index, index === 77 ? { id: other.id } : {}),
        );
        const next = { ...parent, rev: 2, input: { moved: true } };
        expect(await store.commit([updating(parent, next, { creates: children })])).toEqual([
          { ok: false, conflict: false, taken: [other.id] },
        ]);
        expect(await store.getJob(parent.id)).toEqual(parent);
        expect(await store.getJob(other.id)).toEqual(other);
        expect((await store.listChildren(parent.id, 'fan', { limit: 10 })).children).toEqual([]);
        // With the id replaced, the same update goes through.
        const replaced = children.map((child) => (child.id === other.id ? { ...child, id: uuid() } : child));
        expect(await store.commit([updating(parent, next, { creates: replaced })])).toEqual([{ ok: true }]);
        expect((await store.listChildren(parent.id, 'fan', { limit: 200 })).children).toHaveLength(120);
      });

      it('counts each finished child exactly once, with the write that finishes it', async () => {
        const parent = aJob();
        const children = [0, 1, 2].map((index) => aChild(parent, 'fan', index));
        await store.commit([
          creating(parent, {
            creates: children,
            fanInits: [{ parentId: parent.id, step: 'fan', total: 3, done: 0, failed: 0 }],
          }),
        ]);
        const finish = (child: JobRecord, status: 'completed' | 'failed') =>
          updating(
            child,
            { ...child, rev: 2, status },
            { childOutcome: { parentId: parent.id, step: 'fan', index: child.parent?.index ?? 0, status } },
          );
        expect(await store.commit([finish(children[0] as JobRecord, 'completed')])).toEqual([
          { ok: true, fanCounts: { total: 3, done: 1, failed: 0 } },
        ]);
        // The same write again loses on its revision and counts nothing.
        expect(await store.commit([finish(children[0] as JobRecord, 'completed')])).toEqual([
          { ok: false, conflict: true },
        ]);
        const results = await Promise.all([
          store.commit([finish(children[1] as JobRecord, 'completed')]),
          store.commit([finish(children[2] as JobRecord, 'failed')]),
        ]);
        expect(results.flat().every((result) => result.ok)).toBe(true);
        expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total: 3, done: 2, failed: 1 });
        await store.setFanCounts(parent.id, 'fan', { total: 3, done: 2, failed: 0 });
        expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total: 3, done: 2, failed: 0 });
        expect(await store.getFanCounts(parent.id, 'nothing')).toBeUndefined();
      });

      it('counts a large fan-in under concurrent finishing children', async () => {
        const parent = aJob();
        const total = 200;
        const children = Array.from({ length: total }, (_, index) => aChild(parent, 'fan', index));
        await store.commit([
          creating(parent, {
            creates: children,
            fanInits: [{ parentId: parent.id, step: 'fan', total, done: 0, failed: 0 }],
          }),
        ]);
        const commits = children.map((child) =>
          updating(
            child,
            { ...child, rev: 2, status: 'completed', result: { n: child.parent?.index ?? 0 } },
            {
              childOutcome: {
                parentId: parent.id,
                step: 'fan',
                index: child.parent?.index ?? 0,
                status: 'completed',
              },
            },
          ),
        );
        const batches = Array.from({ length: 20 }, (_, b) => commits.slice(b * 10, b * 10 + 10));
        const results = (await Promise.all(batches.map((batch) => store.commit(batch)))).flat();
        expect(results.every((result) => result.ok)).toBe(true);
        expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total, done: total, failed: 0 });
        // At least one writer saw the count reach the total: that one fans in.
        expect(results.some((result) => result.ok && result.fanCounts?.done === total)).toBe(true);
      });

      it('keeps the follow-up of the child that finishes the fan-out, and of every failed child', async () => {
        const parent = aJob();
        const children = [0, 1, 2, 3].map((index) => aChild(parent, 'fan', index));
        await store.commit([
          creating(parent, {
            creates: children,
            fanInits: [{ parentId: parent.id, step: 'fan', total: 4, done: 0, failed: 0 }],
          }),
        ]);
        const finish = (child: JobRecord, status: 'completed' | 'failed') => {
          const index = child.parent?.index ?? 0;
          const followUp = {
            kind: 'childFinished' as const,
            parentId: parent.id,
            step: 'fan',
            index,
            status,
          };
          return updating(
            child,
            { ...child, rev: 2, status },
            {
              childOutcome: { parentId: parent.id, step: 'fan', index, status },
              outbox: [
                {
                  id: `${child.id}:2:f0`,
                  kind: 'followUp',
                  jobId: child.id,
                  createdAt: 5,
                  followUp: status === 'completed' ? { ...followUp, onlyIfLast: true } : followUp,
                },
              ],
            },
          );
        };
        const results = [];
        for (const [index, status] of [
          [0, 'completed'],
          [1, 'failed'],
          [2, 'completed'],
          [3, 'completed'],
        ] as const) {
          results.push(...(await store.commit([finish(children[index] as JobRecord, status)])));
        }
        expect(results.every((result) => result.ok)).toBe(true);
        const leftOut = new Set(results.flatMap((result) => (result.ok ? (result.leftOut ?? []) : [])));
        const pending = new Set(
          (await store.pendingOutbox({ limit: 100 })).entries
            .filter((entry) => entry.jobId !== parent.id)
            .map((entry) => entry.id),
        );
        const ids = children.map((child) => `${child.id}:2:f0`);
        // Whatever a store leaves out it says so, and never the failed child's or the last child's.
        for (const id of ids) expect(pending.has(id)).toBe(!leftOut.has(id));
        expect(pending.has(ids[1] as string)).toBe(true);
        expect(pending.has(ids[3] as string)).toBe(true);
      });
    });

    describe('outbox', () => {
      it('keeps entries until acknowledged, oldest first, in pages', async () => {
        const job = aJob();
        const entries = Array.from({ length: 7 }, (_, n) => requestEntry(job, `${job.id}:1:r${n}`, 10 + n));
        const followUp = {
          id: `${job.id}:1:f0`,
          kind: 'followUp' as const,
          jobId: job.id,
          createdAt: 20,
          followUp: { kind: 'cancelChildren' as const, jobId: job.id, step: 'a' },
        };
        await store.commit([creating(job, { outbox: [...entries, followUp] })]);
        const mine = async () => {
          const all = [];
          let cursor: string | undefined;
          do {
            const page = await store.pendingOutbox({ limit: 3, cursor });
            all.push(...page.entries);
            cursor = page.cursor;
          } while (cursor);
          return all.filter((entry) => entry.jobId === job.id);
        };
        const pending = await mine();
        expect(pending.map((entry) => entry.id)).toEqual([...entries.map((entry) => entry.id), followUp.id]);
        expect(pending[0]).toEqual(entries[0]);
        expect(pending.at(-1)).toEqual(followUp);
        const early = await store.pendingOutbox({ limit: 10_000, createdBefore: 12 });
        expect(early.entries.filter((entry) => entry.jobId === job.id).map((entry) => entry.id)).toEqual([
          entries[0]?.id,
          entries[1]?.id,
        ]);
        await store.ackOutbox([entries[0]?.id as string, entries[1]?.id as string, 'no-such-entry']);
        expect((await mine()).map((entry) => entry.id)).toEqual([
          ...entries.slice(2).map((entry) => entry.id),
          followUp.id,
        ]);
      });

      it("drops a stopped job's unsent requests, not its follow-ups nor other jobs' requests", async () => {
        const job = aJob();
        const other = aJob();
        await store.commit([creating(other, { outbox: [requestEntry(other, 'other-request')] })]);
        await store.commit([
          creating(job, {
            outbox: [
              requestEntry(job, 'old-request'),
              {
                id: 'old-follow-up',
                kind: 'followUp',
                jobId: job.id,
                createdAt: 1,
                followUp: { kind: 'cancelChildren', jobId: job.id, step: 'a' },
              },
            ],
          }),
        ]);
        const stopped = { ...job, rev: 2, status: 'cancelled' as const };
        await store.commit([
          updating(job, stopped, { dropUnsent: true, outbox: [requestEntry(stopped, 'new-request')] }),
        ]);
        const ids = (await store.pendingOutbox({ limit: 10_000 })).entries.map((entry) => entry.id);
        expect(ids).toContain('other-request');
        expect(ids).toContain('old-follow-up');
        expect(ids).toContain('new-request');
        expect(ids).not.toContain('old-request');
      });

      it('keeps a request entry exactly as given', async () => {
        const job = aJob({ input: { deep: { list: [1, 'two', null, { three: 3 }] } } });
        const entry = {
          id: 'exact',
          kind: 'request' as const,
          jobId: job.id,
          createdAt: 5,
          request: { ...aRequest(job), vhost: 'tenant-a' },
        };
        await store.commit([creating(job, { outbox: [entry] })]);
        const found = (await store.pendingOutbox({ limit: 10_000 })).entries.find((e) => e.id === 'exact');
        expect(found).toEqual(entry);
      });
    });

    describe('timers', () => {
      it('sets, replaces and clears timers, and lists them earliest first', async () => {
        const job = aJob();
        const timer = (step: string | null, at: number) => ({
          jobId: job.id,
          step,
          kind: 'attempt' as const,
          attempt: 1,
          at,
        });
        await store.commit([
          creating(job, {
            timers: [
              { op: 'set', timer: timer('a', 5_000) },
              { op: 'set', timer: timer('b', 3_000) },
              { op: 'set', timer: { ...timer(null, 4_000), kind: 'job', attempt: 0 } },
            ],
          }),
        ]);
        const next = { ...job, rev: 2 };
        await store.commit([
          updating(job, next, {
            timers: [
              { op: 'set', timer: timer('a', 1_000) },
              { op: 'clear', key: { jobId: job.id, step: 'b' } },
            ],
          }),
        ]);
        const mine = (await store.listTimers({ limit: 10_000 })).filter((t) => t.jobId === job.id);
        expect(mine).toEqual([timer('a', 1_000), { ...timer(null, 4_000), kind: 'job', attempt: 0 }]);
        const due = (await store.listTimers({ dueBy: 2_000, limit: 10_000 })).filter(
          (t) => t.jobId === job.id,
        );
        expect(due).toEqual([timer('a', 1_000)]);
      });
    });

    describe('queries', () => {
      it('lists top-level jobs newest first, filtered, in pages', async () => {
        const workflow = `query-${uuid()}`;
        const jobs = Array.from({ length: 7 }, (_, n) =>
          aJob({
            workflow,
            createdAt: 10_000 + n,
            status: n % 2 ? 'completed' : 'running',
            endedAt: n % 2 ? 20_000 + n : undefined,
          }),
        );
        const child = aChild(jobs[0] as JobRecord, 'fan', 0, { workflow, createdAt: 50_000 });
        for (const job of jobs) await store.commit([creating(job)]);
        await store.commit([creating(child)]);

        const all: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.queryJobs({ workflow, limit: 3, cursor });
          expect(page.jobs.length).toBeLessThanOrEqual(3);
          all.push(...page.jobs.map((job) => job.id));
          cursor = page.cursor;
        } while (cursor);
        expect(all).toEqual([...jobs].reverse().map((job) => job.id));

        const completed = await store.queryJobs({ workflow, status: 'completed' });
        expect(completed.jobs.map((job) => job.id)).toEqual(
          [jobs[5], jobs[3], jobs[1]].map((job) => job?.id),
        );
        const recent = await store.queryJobs({ workflow, status: 'completed', endedSince: 20_003 });
        expect(recent.jobs.map((job) => job.id)).toEqual([jobs[5], jobs[3]].map((job) => job?.id));
        const withChildren = await store.queryJobs({ workflow, includeChildren: true });
        expect(withChildren.jobs[0]?.id).toBe(child.id);
        expect(await store.countJobs(workflow)).toEqual({
          pending: 0,
          waiting: 0,
          running: 4,
          paused: 0,
          scheduled: 0,
          queued: 0,
          completed: 3,
          failed: 0,
          cancelled: 0,
          aborted: 0,
        });
      });

      it('deletes finished top-level jobs with their children, and nothing else', async () => {
        const workflow = `retention-${uuid()}`;
        const old = aJob({ workflow, status: 'completed', endedAt: 1_000 });
        const oldChild = aChild(old, 'fan', 0, { workflow, status: 'completed', endedAt: 900 });
        const recent = aJob({ workflow, status: 'failed', endedAt: 9_000 });
        const running = aJob({ workflow, status: 'running' });
        await store.commit([creating(old, { creates: [oldChild] }), creating(recent), creating(running)]);
        expect(await store.deleteFinishedJobs(5_000)).toBeGreaterThanOrEqual(2);
        expect(await store.getJob(old.id)).toBeUndefined();
        expect(await store.getJob(oldChild.id)).toBeUndefined();
        expect(await store.getJob(recent.id)).toBeDefined();
        expect(await store.getJob(running.id)).toBeDefined();
      });
    });

    describe('namespaces (a workflow stored as `<namespace>/<name>`)', () => {
      it("keeps two namespaces' workflows of the same name apart, and lists a namespace's jobs only", async () => {
        // Prepare
        const [teamA, teamB] = [`a${uuid().slice(0, 8)}`, `b${uuid().slice(0, 8)}`];
        const billingA = aWorkflow(`${teamA}/billing`);
        const billingB = aWorkflow(`${teamB}/billing`, ['x']);
        await store.saveWorkflow(billingA, 1_000);
        await store.saveWorkflow(billingB, 1_000);
        await store.saveWorkflow(aWorkflow('billing'), 1_000);
        const jobA = aJob({ workflow: billingA.name, createdAt: 5_000 });
        const jobB = aJob({ workflow: billingB.name, createdAt: 5_001 });
        const finishedB = aJob({
          workflow: billingB.name,
          createdAt: 5_002,
          status: 'completed',
          endedAt: 6_000,
        });
        const plain = aJob({ workflow: 'billing', createdAt: 5_003 });
        await store.commit([creating(jobA), creating(jobB), creating(finishedB), creating(plain)]);
        // Act
        const inA = await store.queryJobs({ namespace: teamA });
        const inB = await store.queryJobs({ namespace: teamB, status: 'completed' });
        const inDefault = await store.queryJobs({ namespace: 'default', limit: 1_000 });
        // Assess
        expect(inA.jobs.map((job) => job.id)).toEqual([jobA.id]);
        expect(inB.jobs.map((job) => job.id)).toEqual([finishedB.id]);
        expect(inDefault.jobs.map((job) => job.id)).toContain(plain.id);
        expect(inDefault.jobs.filter((job) => job.workflow.includes('/'))).toEqual([]);
        expect((await store.getWorkflow(billingB.name))?.definition).toEqual(billingB);
        expect((await store.countJobs(billingB.name)).running).toBe(1);
        expect((await store.countJobs(billingA.name)).completed).toBe(0);
        const names = (await store.listWorkflows()).map((workflow) => workflow.name);
        expect(names).toEqual(expect.arrayContaining([billingA.name, billingB.name]));
      });
    });

    describe('scoped tokens (hash and metadata only)', () => {
      it('saves a token once, reads it by id, lists it, and revokes it at once', async () => {
        // Prepare
        const hash = `${uuid().replaceAll('-', '')}${uuid().replaceAll('-', '')}`;
        const token: StoredToken = {
          id: hash.slice(0, 16),
          hash,
          namespace: 'team-a',
          role: 'run',
          description: 'the billing deployer',
          createdAt: 7_000,
        };
        // Act and assess
        expect(await store.saveToken(token)).toBe(true);
        expect(await store.saveToken({ ...token, role: 'admin' })).toBe(false);
        expect(await store.getToken(token.id)).toEqual(token);
        expect((await store.listTokens()).filter((t) => t.id === token.id)).toEqual([token]);
        expect(await store.deleteToken(token.id)).toBe(true);
        expect(await store.getToken(token.id)).toBeUndefined();
        expect((await store.listTokens()).filter((t) => t.id === token.id)).toEqual([]);
        expect(await store.deleteToken(token.id)).toBe(false);
      });
    });

    describe('paused jobs (not finished: listed, counted, recovered and kept like running ones)', () => {
      it('moves a job between the running and paused listings and counts, and keeps it from retention', async () => {
        const workflow = `paused-${uuid()}`;
        const job = aJob({ workflow, status: 'running', createdAt: 1_000 });
        const other = aJob({ workflow, status: 'running', createdAt: 2_000 });
        await store.commit([creating(job), creating(other)]);
        const paused = { ...job, rev: 2, status: 'paused' as const, updatedAt: 3_000 };
        await store.commit([updating(job, paused)]);
        const ids = async (status: JobRecord['status']) =>
          (await store.queryJobs({ workflow, status })).jobs.map((found) => found.id);
        expect(await ids('paused')).toEqual([job.id]);
        expect(await ids('running')).toEqual([other.id]);
        expect((await store.queryJobs({ workflow })).jobs.map((found) => found.id)).toEqual([
          other.id,
          job.id,
        ]);
        expect(await store.countJobs(workflow)).toMatchObject({ running: 1, paused: 1, completed: 0 });
        // Retention deletes finished jobs only: a paused one, however old, stays.
        await store.deleteFinishedJobs(Number.MAX_SAFE_INTEGER);
        expect((await store.getJob(job.id))?.status).toBe('paused');

        const resumed = { ...paused, rev: 3, status: 'running' as const, updatedAt: 4_000 };
        await store.commit([updating(paused, resumed)]);
        expect(await ids('paused')).toEqual([]);
        expect(await ids('running')).toEqual([other.id, job.id]);
        expect(await store.countJobs(workflow)).toMatchObject({ running: 2, paused: 0 });
      });

      it("hands a paused job's outbox entries to recovery, whether written as it paused or while paused", async () => {
        const job = aJob({ status: 'running', createdAt: Date.now() });
        await store.commit([creating(job)]);
        const paused = { ...job, rev: 2, status: 'paused' as const, updatedAt: job.createdAt + 10 };
        const pauseChildren = {
          id: `${job.id}:2:f0`,
          kind: 'followUp' as const,
          jobId: job.id,
          createdAt: job.createdAt + 10,
          followUp: { kind: 'pauseChildren' as const, jobId: job.id, step: 'a' },
        };
        await store.commit([updating(job, paused, { outbox: [pauseChildren] })]);
        const later = { ...paused, rev: 3, updatedAt: job.createdAt + 20 };
        const reply = requestEntry(later, `${job.id}:3:r0`, job.createdAt + 20);
        await store.commit([updating(paused, later, { outbox: [reply] })]);
        const pending = (await store.pendingOutbox({ limit: 10_000 })).entries.filter(
          (entry) => entry.jobId === job.id,
        );
        expect(pending.map((entry) => entry.id).sort()).toEqual([pauseChildren.id, reply.id].sort());
      });
    });

    describe('control flow records (when, input, continueOnError, workflow:, onFailure, abort, suspend)', () => {
      /** A job as the control-flow rules leave it: every new field and status set once. */
      const controlFlowJob = (workflow: string, overrides: JobOverrides = {}): JobRecord => {
        const caller = uuid();
        return aJob({
          workflow,
          status: 'aborted',
          endedAt: 3_000,
          updatedAt: 3_000,
          rev: 1,
          seq: 3,
          failures: 2,
          followUp: uuid(),
          causedBy: uuid(),
          calledBy: { id: caller, step: 'ship', attempt: 3, chain: ['order-pipeline', 'shipping'] },
          error: { step: 'load', attempt: 1, message: 'there is no order "o-9999"', at: 3_000 },
          input: { orderId: 'o-9999', nested: { list: [1, null, 'x'] } },
          steps: [
            {
              name: 'load',
              status: 'failed',
              attempts: 1,
              firstAttempt: 1,
              error: 'aborted: there is no order',
              endedAt: 3_000,
            },
            {
              name: 'approve',
              status: 'skipped',
              attempts: 0,
              firstAttempt: 1,
              skipReason: 'when was false',
              seq: 1,
              endedAt: 2_000,
            },
            {
              name: 'charge',
              status: 'failed',
              attempts: 3,
              firstAttempt: 1,
              handled: true,
              input: { orderId: 'o-9999', amount: 12.5, card: '4000' },
              output: { error: { step: 'charge', message: 'card declined', attempts: 3, at: 2_500 } },
              error: 'card declined',
              seq: 2,
              endedAt: 2_500,
            },
            {
              name: 'wait',
              status: 'suspended',
              attempts: 1,
              firstAttempt: 1,
              startedAt: 2_000,
              attemptStartedAt: 2_000,
            },
            { name: 'ship', status: 'cancelled', attempts: 3, firstAttempt: 1, job: uuid(), endedAt: 3_000 },
          ],
          ...overrides,
        });
      };

      it('round-trips the new fields and statuses through create, update, getJob(s) and queryJobs', async () => {
        const workflow = `control-${uuid()}`;
        const job = controlFlowJob(workflow);
        const child = aChild(job, 'fan', 0, {
          workflow,
          parentInput: { orderId: 'o-9999', lines: [{ sku: 'pen' }] },
          status: 'aborted',
          endedAt: 2_900,
        });
        expect(await store.commit([creating(job, { creates: [child] })])).toEqual([{ ok: true }]);
        expect(await store.getJob(job.id)).toEqual(job);
        expect(await store.getJob(child.id)).toEqual(child);
        expect((await store.getJobs([job.id, child.id])).get(child.id)).toEqual(child);
        expect((await store.queryJobs({ workflow })).jobs).toEqual([job]);
        expect((await store.queryJobs({ workflow, status: 'aborted' })).jobs).toEqual([job]);
        expect(
          (await store.queryJobs({ workflow, status: 'aborted', includeChildren: true })).jobs,
        ).toHaveLength(2);
        expect((await store.queryJobs({ workflow, status: 'failed' })).jobs).toEqual([]);
        expect((await store.listChildren(job.id, 'fan', { limit: 10 })).children).toEqual([child]);

        // An update that sets them on a running job (a step suspended, then resumed; a call linked).
        const plain = aJob({ workflow });
        await store.commit([creating(plain)]);
        const linked = controlFlowJob(workflow, {
          id: plain.id,
          root: plain.id,
          rev: 2,
          status: 'running',
          endedAt: undefined,
          error: undefined,
        });
        delete linked.endedAt;
        delete linked.error;
        expect(await store.commit([updating(plain, linked)])).toEqual([{ ok: true }]);
        expect(await store.getJob(plain.id)).toEqual(linked);
        // And one that clears them again (a retried job: the suspended step runs, the skip is undone).
        const { calledBy: _c, causedBy: _b, followUp: _f, failures: _n, ...bare } = linked;
        const cleared: JobRecord = {
          ...bare,
          rev: 3,
          steps: PersistentList.of(
            linked.steps.map(({ handled: _h, skipReason: _r, input: _i, job: _j, ...step }) => ({
              ...step,
              status: 'running' as const,
            })),
          ),
        };
        expect(await store.commit([updating(linked, cleared)])).toEqual([{ ok: true }]);
        expect(await store.getJob(plain.id)).toEqual(cleared);
      });

      it('counts aborted jobs as finished, moves the count with the status, and deletes them in retention', async () => {
        const workflow = `aborted-${uuid()}`;
        const running = aJob({ workflow });
        const other = aJob({ workflow, status: 'running' });
        const child = aChild(running, 'fan', 0, { workflow });
        await store.commit([creating(running, { creates: [child] }), creating(other)]);
        const aborted: JobRecord = {
          ...running,
          rev: 2,
          status: 'aborted',
          endedAt: 2_000,
          updatedAt: 2_000,
        };
        const abortedChild: JobRecord = { ...child, rev: 2, status: 'cancelled', endedAt: 2_000 };
        expect(
          await store.commit([
            updating(running, aborted, { dropUnsent: true }),
            updating(child, abortedChild, { dropUnsent: true }),
          ]),
        ).toEqual([{ ok: true }, { ok: true }]);
        expect(await store.countJobs(workflow)).toEqual({
          pending: 0,
          waiting: 0,
          running: 1,
          paused: 0,
          scheduled: 0,
          queued: 0,
          completed: 0,
          failed: 0,
          cancelled: 0,
          aborted: 1,
        });
        expect(
          (await store.queryJobs({ workflow, status: 'aborted', endedSince: 2_000 })).jobs.map((j) => j.id),
        ).toEqual([running.id]);
        // Aborted, then run again (a retry) and failed: it counts once, in its latest status.
        const retried: JobRecord = { ...aborted, rev: 3, status: 'running', endedAt: undefined };
        delete retried.endedAt;
        await store.commit([updating(aborted, retried)]);
        expect((await store.countJobs(workflow)).aborted).toBe(0);
        const abortedAgain: JobRecord = { ...retried, rev: 4, status: 'aborted', endedAt: 2_500 };
        await store.commit([updating(retried, abortedAgain)]);
        expect(await store.countJobs(workflow)).toMatchObject({ running: 1, aborted: 1 });

        // Retention takes it with its child and leaves the running job; the count goes with it.
        expect(await store.deleteFinishedJobs(3_000)).toBeGreaterThanOrEqual(1);
        expect(await store.getJob(running.id)).toBeUndefined();
        expect(await store.getJob(child.id)).toBeUndefined();
        expect(await store.getJob(other.id)).toBeDefined();
        expect(await store.countJobs(workflow)).toEqual({
          pending: 0,
          waiting: 0,
          running: 1,
          paused: 0,
          scheduled: 0,
          queued: 0,
          completed: 0,
          failed: 0,
          cancelled: 0,
          aborted: 0,
        });
        expect((await store.queryJobs({ workflow, status: 'aborted' })).jobs).toEqual([]);
      });

      it('carries the startJob, callFinished, cancelJob and abortJob follow-ups intact, also past dropUnsent', async () => {
        const job = aJob();
        const child = aChild(job, 'fan', 0);
        const called = uuid();
        const followUps: FollowUp[] = [
          {
            kind: 'startJob',
            jobId: job.id,
            workflow: 'shipping',
            id: called,
            input: { orderId: 'o-1001', address: 'x', deep: { list: [1, null, { a: 'é' }] } },
            calledBy: { id: job.id, step: 'ship', attempt: 1, chain: ['order-pipeline'] },
          },
          {
            kind: 'startJob',
            jobId: job.id,
            workflow: 'shipping',
            version: 3,
            id: uuid(),
            input: {},
            calledBy: { id: job.id, step: 'ship', attempt: 2, chain: ['a', 'b', 'c'] },
          },
          { kind: 'callFinished', jobId: called, callerId: job.id, step: 'ship', attempt: 1 },
          { kind: 'cancelJob', jobId: called },
          { kind: 'abortJob', jobId: child.id, root: job.id, reason: 'there is no order "o-9999"' },
        ];
        const entry = (owner: JobRecord, n: number, followUp: FollowUp, createdAt = 10 + n): OutboxEntry => ({
          id: `${owner.id}:f${n}`,
          kind: 'followUp',
          jobId: owner.id,
          createdAt,
          followUp,
        });
        const created = followUps.map((followUp, n) => entry(job, n, followUp));
        const childEntry = entry(child, 9, followUps[4] as FollowUp, 30);
        await store.commit([
          creating(job, { outbox: [requestEntry(job, `${job.id}:r0`), ...created], creates: [child] }),
        ]);
        await store.commit([
          updating(child, { ...child, rev: 2, status: 'aborted', endedAt: 30 }, { outbox: [childEntry] }),
        ]);
        // The abort: the job stops, its unsent requests go, the onFailure start is written with it.
        const onFailure = entry(
          job,
          20,
          {
            kind: 'startJob',
            jobId: job.id,
            workflow: 'order-failed',
            id: uuid(),
            input: {
              job: { id: job.id, workflow: 'wf', version: 1, input: job.input },
              error: { step: 'a', attempt: 1, message: 'x', at: 40 },
            },
            causedBy: job.id,
          },
          40,
        );
        const aborted: JobRecord = {
          ...job,
          rev: 2,
          status: 'aborted',
          endedAt: 40,
          failures: 1,
          followUp:
            onFailure.kind === 'followUp' && onFailure.followUp.kind === 'startJob'
              ? onFailure.followUp.id
              : '',
        };
        await store.commit([updating(job, aborted, { dropUnsent: true, outbox: [onFailure] })]);
        const pending: OutboxEntry[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.pendingOutbox({ limit: 4, cursor });
          pending.push(...page.entries);
          cursor = page.cursor;
        } while (cursor);
        const mine = pending.filter((e) => e.jobId === job.id || e.jobId === child.id);
        const byId = new Map(mine.map((e) => [e.id, e]));
        expect(byId.has(`${job.id}:r0`)).toBe(false);
        for (const expected of [...created, childEntry, onFailure])
          expect(byId.get(expected.id)).toEqual(expected);
        expect(mine).toHaveLength(created.length + 2);
        await store.ackOutbox(mine.map((e) => e.id));
        const after = (await store.pendingOutbox({ limit: 10_000 })).entries;
        expect(after.filter((e) => e.jobId === job.id || e.jobId === child.id)).toEqual([]);
      });
    });

    describe('every field (each value with every optional field set: test/support/every-field.ts)', () => {
      it('keeps every field of a job, its outbox entries, timers, fan-out counters, a token and namespace settings, for another reader', async () => {
        // Prepare: a job in its parent's fan-out, committed with its own request, one follow-up of
        // each kind, a request to the child it creates, a timer of each kind and a fan-out's counters.
        const parent = aJob({ vhost: 'tenant-a' });
        const job = aJobWithEveryField(parent.id);
        const child = aChild(job, 'fan', 0, { vhost: 'tenant-a' });
        const toChild: OutboxEntry = {
          id: `${job.id}:1:c0`,
          kind: 'request',
          jobId: child.id,
          createdAt: job.updatedAt,
          request: aRequestWithEveryField({ jobId: child.id, queue: 'work', vhost: 'tenant-a' }),
        };
        const entries = [...everyOutboxEntry(job), toChild];
        const timers = everyTimer(job.id);
        const token = aTokenWithEveryField();
        const settings = aNamespaceSettingsWithEveryField();
        await store.commit([creating(parent)]);

        // Act
        const committed = await store.commit([
          creating(job, {
            creates: [child],
            outbox: entries,
            timers: timers.map((timer) => ({ op: 'set', timer })),
            fanInits: [aFanInitWithEveryField(job.id)],
          }),
        ]);
        await store.saveToken(token);
        await store.saveNamespaceSettings(settings);
        const reader = subject.another ? await subject.another() : store;
        const pending: OutboxEntry[] = [];
        let cursor: string | undefined;
        do {
          const page = await reader.pendingOutbox({ limit: 5, cursor });
          pending.push(...page.entries.filter((entry) => entry.jobId === job.id || entry.jobId === child.id));
          cursor = page.cursor;
        } while (cursor);
        const timerJobs = new Set(timers.map((timer) => timer.jobId));
        const armed = (await reader.listTimers({ limit: 100_000 })).filter((timer) =>
          timerJobs.has(timer.jobId),
        );

        // Assess
        expect(committed).toEqual([{ ok: true }]);
        expect(await reader.getJob(job.id)).toEqual(job);
        expect((await reader.getJobs([job.id])).get(job.id)).toEqual(job);
        expect((await reader.listChildren(parent.id, 'fan', { fromIndex: 7, limit: 1 })).children).toEqual([
          job,
        ]);
        const byId = (a: OutboxEntry, b: OutboxEntry) => (a.id < b.id ? -1 : 1);
        expect(pending.sort(byId)).toEqual([...entries].sort(byId));
        expect(armed).toEqual([...timers].sort((a, b) => a.at - b.at));
        expect(await reader.getFanCounts(job.id, 'fan')).toEqual({ total: 5, done: 1, failed: 1 });
        expect(await reader.getToken(token.id)).toEqual(token);
        expect(await reader.getNamespaceSettings(settings.namespace)).toEqual(settings);
      });
    });

    describeMaxRunningContract(
      () => store,
      () => (subject.another ? subject.another() : Promise.resolve(store)),
    );
    describeTreeQuotaContract(
      () => store,
      () => (subject.another ? subject.another() : Promise.resolve(store)),
    );

    describeNamespaceSettingsContract(
      () => store,
      () => (subject.another ? subject.another() : Promise.resolve(store)),
    );

    describeRepliesInHandContract(() => store);
    describeSearchContract(() => store);
    describeAuditLogContract(() => store);
    describeDeliveryLogContract(
      () => store,
      async (id) => subject.deliveryExpiry?.(id),
    );

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
