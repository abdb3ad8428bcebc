import { describe, expect, it } from 'vitest';
import type { Bus, JobRecord, StepRequest, Store, TimerScheduler } from '../../../engine/index.js';
import { calledJobId } from '../../../engine/job/calls.js';
import { treeRootOf } from '../../../engine/job/tree-quota.js';
import { Manager } from '../../../functions/manager/manager.js';
import { runawayDocument } from '../../support/runaway-tree.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

/** A fan-out over the input's `items`, one worker step a child. */
const SPREAD = `workflows:
  - name: spread
    steps:
      - name: fan
        task: each
      - name: after
        depends: [ fan ]
    tasks:
      - name: each
        itemListKey: items
        steps:
          - name: work
`;

/** Two workflows that fan out and call each other: a tree that grows by 3 at every level. */
const RUNAWAY = runawayDocument(['ping', 'pong']);

/** Two children, each preparing with a worker, then fanning out to three grandchildren. */
const NEST = `workflows:
  - name: nest
    steps:
      - name: kids
        task: kid
        input: '{"items": [1, 2]}'
    tasks:
      - name: kid
        itemListKey: items
        steps:
          - name: prepare
          - name: grandkids
            task: grandkid
            depends: [ prepare ]
            input: '{"items": [1, 2, 3]}'
      - name: grandkid
        itemListKey: items
        steps:
          - name: leaf
`;

/** Two children, each preparing with a worker, then calling a workflow. */
const RELAY = `workflows:
  - name: relay
    steps:
      - name: kids
        task: kid
        input: '{"items": [1, 2]}'
    tasks:
      - name: kid
        itemListKey: items
        steps:
          - name: prepare
          - name: hand-over
            workflow: callee
            depends: [ prepare ]
  - name: callee
    steps:
      - name: work
`;

async function world(yaml: string, maxTreeJobs?: number, fanOutSlice?: number): Promise<SimulatedWorld> {
  const w = new SimulatedWorld(undefined, undefined, undefined, fanOutSlice, maxTreeJobs);
  await w.register(yaml);
  return w;
}

/**
 * Another manager on the same store whose outbox is never carried out: what it commits stays in the
 * store, as after a manager that died right after its commit, until someone recovers it. Here, it
 * stands for a root whose cascade has not come down yet.
 */
function frozenManager(store: Store): Manager {
  const bus: Bus = {
    send: async () => {},
    ensureQueues: async () => {},
    ping: async () => {},
    close: async () => {},
  };
  const timers: TimerScheduler = { arm: async () => {}, disarm: async () => {} };
  const manager = new Manager({ store, bus, timers });
  manager.stop();
  return manager;
}

/** Every job of the tree under `root` (its root excepted). */
async function treeJobs(store: Store, root: string): Promise<JobRecord[]> {
  const { jobs } = await store.queryJobs({ includeChildren: true, limit: 100_000 });
  return jobs.filter((job) => job.id !== root && treeRootOf(job) === root);
}

const childrenOf = async (store: Store, parentId: string, step: string) =>
  (await store.listChildren(parentId, step, { limit: 1_000 })).children;

describe('Rules: bounded job trees (a quota of jobs under each root)', () => {
  it("counts a fan-out's children when it starts, and fails a fan-out over the quota, naming it and the root", async () => {
    const w = await world(SPREAD, 5);
    const fits = await w.start('spread', { items: [1, 2, 3, 4, 5] });
    expect(await w.store.getTree(fits)).toEqual({ size: 5, rootStatus: 'running' });
    expect(await childrenOf(w.store, fits, 'fan')).toHaveLength(5);

    const over = await w.start('spread', { items: [1, 2, 3, 4, 5, 6] });
    const job = await w.job(over);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({
      step: 'fan',
      message: `the tree of job ${over} would hold 6 jobs under its root (6 more), over its quota of 5 (a setting of the manager: serve --max-tree-jobs, deployed MAX_TREE_JOBS)`,
    });
    expect(await childrenOf(w.store, over, 'fan')).toEqual([]);
    expect((await w.store.getTree(over)).size).toBe(0);
  });

  it('counts a fan-out created in slices whole when it starts: it fits, or no slice is made', async () => {
    const w = await world(SPREAD, 4, 2);
    const fits = await w.start('spread', { items: [1, 2, 3, 4] });
    expect(await childrenOf(w.store, fits, 'fan')).toHaveLength(4);
    expect((await w.store.getTree(fits)).size).toBe(4);

    const over = await w.start('spread', { items: [1, 2, 3, 4, 5] });
    expect((await w.job(over)).status).toBe('failed');
    expect(await childrenOf(w.store, over, 'fan')).toEqual([]);
  });

  it('fails the step like any other: continueOnError hands the quota error on', async () => {
    const w = await world(
      SPREAD.replace('        task: each\n', '        task: each\n        continueOnError: true\n'),
      2,
    );
    const id = await w.start('spread', { items: [1, 2, 3] });
    const [after] = w.take();
    expect(after?.step).toBe('after');
    expect(after?.body).toMatchObject({
      error: { step: 'fan', message: expect.stringContaining('over its quota of 2') },
    });
    expect((await w.job(id)).status).toBe('running');
  });

  it("counts every attempt's called job, and fails the step at once, whatever its retries, when no call fits", async () => {
    const w = await world(
      `workflows:
  - name: caller
    steps:
      - name: call
        workflow: callee
        retries: 5
  - name: callee
    steps:
      - name: work
`,
      2,
    );
    const id = await w.start('caller');
    for (const attempt of [1, 2]) {
      const [work] = w.take();
      expect(work?.jobId).toBe(calledJobId(id, 'call', attempt));
      await w.reply(work as StepRequest, { error: 'no luck' }, { type: 'error' });
    }
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain(
      `the tree of job ${id} would hold 3 jobs under its root (1 more), over its quota of 2`,
    );
    expect(stepsOf(job).call).toMatchObject({ status: 'failed', attempts: 3 });
    expect(w.take()).toEqual([]);
    expect(await w.store.getTree(id)).toEqual({ size: 2, rootStatus: 'failed' });
    expect((await w.job(calledJobId(id, 'call', 1))).treeRoot).toBe(id);
  });

  it('stops a tree of fan-outs that call each other at its quota, the step that would pass it failed', async () => {
    const w = await world(RUNAWAY, 30);
    const id = await w.start('ping');
    const root = await w.job(id);
    expect(root.status).toBe('failed');
    expect(root.error?.message).toContain(`the tree of job ${id} would hold`);
    expect(root.error?.message).toContain('over its quota of 30');
    // 3 children, 3 called jobs, 9 children, 9 called jobs: 24; of the 9 fan-outs of 3 after them, 2 fit.
    expect((await w.store.getTree(id)).size).toBe(30);
    const jobs = await treeJobs(w.store, id);
    expect(jobs.length).toBeGreaterThanOrEqual(24);
    expect(jobs.length).toBeLessThanOrEqual(30);
    expect(jobs.filter((job) => job.status === 'running' || job.status === 'paused')).toEqual([]);
  });

  it('refuses new jobs under a cancelled root before its cascade comes down: the job that would make them is cancelled', async () => {
    const w = await world(NEST);
    const id = await w.start('nest');
    const prepares = w.take();
    expect(prepares.map((request) => request.step)).toEqual(['prepare', 'prepare']);
    // The root is cancelled; its cascade is stored but not carried out yet.
    await frozenManager(w.store).cancel(id);
    const kid = prepares[0] as StepRequest;
    expect((await w.job(kid.jobId)).status).toBe('running');

    await w.reply(kid, {});
    expect(await childrenOf(w.store, kid.jobId, 'grandkids')).toEqual([]);
    expect((await w.job(kid.jobId)).status).toBe('cancelled');
    expect(await w.store.getTree(id)).toEqual({ size: 2, rootStatus: 'cancelled' });
    expect(w.take()).toEqual([]);
  });

  it('pauses the job that would grow a tree under a paused root; the root’s resume lets it grow', async () => {
    const w = await world(NEST);
    const id = await w.start('nest');
    const [kid] = w.take() as [StepRequest];
    await frozenManager(w.store).pause(id);

    await w.reply(kid, { prepared: true });
    const paused = await w.job(kid.jobId);
    expect(paused.status).toBe('paused');
    expect(stepsOf(paused).prepare).toMatchObject({ status: 'completed', output: { prepared: true } });
    expect(await childrenOf(w.store, kid.jobId, 'grandkids')).toEqual([]);

    await w.manager.resume(id);
    await w.manager.drain();
    expect((await w.job(kid.jobId)).status).toBe('running');
    expect(await childrenOf(w.store, kid.jobId, 'grandkids')).toHaveLength(3);
    expect((await w.store.getTree(id)).size).toBe(2 + 3);
    expect(w.take().map((request) => request.step)).toEqual(['leaf', 'leaf', 'leaf']);
  });

  it('does not create a job a call decided before its root was cancelled', async () => {
    const w = await world(RELAY);
    const id = await w.start('relay');
    const [kid] = w.take() as [StepRequest];
    const frozen = frozenManager(w.store);
    // The kid's call is decided and counted, its start stored; then the root is cancelled.
    await frozen.handleReplies([{ correlationId: kid.correlationId, body: '{}' }]);
    await frozen.cancel(id);
    await w.manager.recover();
    await w.manager.drain();

    expect(await w.store.getJob(calledJobId(kid.jobId, 'hand-over', 1))).toBeUndefined();
    expect((await w.job(kid.jobId)).status).toBe('cancelled');
    expect(await treeJobs(w.store, id)).toHaveLength(2);
  });

  it('creates a called job paused under a paused root, and runs it when the root resumes', async () => {
    const w = await world(RELAY);
    const id = await w.start('relay');
    const [kid] = w.take() as [StepRequest];
    const frozen = frozenManager(w.store);
    await frozen.handleReplies([{ correlationId: kid.correlationId, body: '{"n": 1}' }]);
    await frozen.pause(id);
    await w.manager.recover();
    await w.manager.drain();

    const calledId = calledJobId(kid.jobId, 'hand-over', 1);
    expect((await w.job(calledId)).status).toBe('paused');
    expect(w.take()).toEqual([]);

    await w.manager.resume(id);
    await w.manager.drain();
    expect((await w.job(calledId)).status).toBe('running');
    expect(w.take().map((request) => [request.jobId, request.step])).toEqual([[calledId, 'work']]);
  });
});
