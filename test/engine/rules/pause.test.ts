import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const chain = (fetchKeys = '', workflowKeys = '') => `workflows:
  - name: chain
${workflowKeys}    steps:
      - name: fetch
${fetchKeys}      - name: side
      - name: store
        depends: [ fetch ]
`;

async function started(fetchKeys = '', workflowKeys = '') {
  const world = new SimulatedWorld();
  await world.register(chain(fetchKeys, workflowKeys));
  const id = await world.start('chain', { url: 'x' });
  const [fetch, side] = world.take();
  return { world, id, fetch: fetch!, side: side! };
}

async function pause(world: SimulatedWorld, id: string) {
  const job = await world.manager.pause(id);
  await world.manager.drain();
  return job;
}

async function resume(world: SimulatedWorld, id: string) {
  const job = await world.manager.resume(id);
  await world.manager.drain();
  return job;
}

describe('Rules: pause and resume', () => {
  it('stores replies while paused, holds the steps they make ready, and dispatches them at resume', async () => {
    const { world, id, fetch, side } = await started();
    expect((await pause(world, id)).status).toBe('paused');
    await world.reply(fetch, { page: 'p' });
    expect(world.take()).toEqual([]);
    const paused = await world.job(id);
    expect(paused.status).toBe('paused');
    expect(stepsOf(paused)).toMatchObject({
      fetch: { status: 'completed', output: { page: 'p' } },
      side: { status: 'running' },
      store: { status: 'waiting' },
    });
    expect((await resume(world, id)).status).toBe('running');
    const sent = world.take();
    expect(sent.map((request) => [request.step, request.body])).toEqual([['store', { page: 'p' }]]);
    await world.reply(side, {});
    await world.reply(sent[0]!, { stored: true });
    expect((await world.job(id)).status).toBe('completed');
  });

  it('records when the job was paused, for as long as it is, whatever replies arrive meanwhile', async () => {
    const { world, id, fetch } = await started();
    await world.advance(1_000);
    const pausedAt = world.now;
    await pause(world, id);
    await world.advance(5_000);
    await world.reply(fetch, { page: 'p' });
    const paused = await world.job(id);
    expect(paused.pausedAt).toBe(pausedAt);
    expect(paused.updatedAt).toBeGreaterThan(pausedAt);
    await resume(world, id);
    expect((await world.job(id)).pausedAt).toBeUndefined();
  });

  it('is idempotent: pausing a paused job and resuming a running one change nothing', async () => {
    const { world, id } = await started();
    const first = await pause(world, id);
    const again = await pause(world, id);
    expect(again.status).toBe('paused');
    expect(again.rev).toBe(first.rev);
    const resumed = await resume(world, id);
    const twice = await resume(world, id);
    expect(twice.status).toBe('running');
    expect(twice.rev).toBe(resumed.rev);
    expect(world.take()).toEqual([]);
  });

  it('refuses to pause or resume a finished job (409), and an unknown one (404)', async () => {
    const { world, id } = await started();
    await world.manager.cancel(id);
    await expect(world.manager.pause(id)).rejects.toThrow(
      new ManagerError('conflict', 'the job is already cancelled'),
    );
    await expect(world.manager.resume(id)).rejects.toThrow(
      new ManagerError('conflict', 'the job is already cancelled'),
    );
    await expect(world.manager.pause(crypto.randomUUID())).rejects.toMatchObject({ code: 'not_found' });
  });

  it('completes a job whose last step completes while paused', async () => {
    const { world, id, fetch, side } = await started();
    await world.reply(fetch, {});
    const store = world.take()[0]!;
    await pause(world, id);
    await world.reply(side, { s: 1 });
    await world.reply(store, { t: 2 });
    const job = await world.job(id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ s: 1, t: 2 });
    await expect(world.manager.resume(id)).rejects.toThrow('the job is already completed');
  });

  it('holds a retry whose delay ends while paused, and sends it at resume', async () => {
    const { world, id, fetch } = await started('        retries: 1\n        retryDelay: 1s\n');
    await pause(world, id);
    await world.reply(fetch, { error: 'flaky' }, { type: 'error' });
    await world.advance(5_000);
    expect(world.take()).toEqual([]);
    expect(stepsOf(await world.job(id)).fetch).toMatchObject({
      status: 'running',
      attempts: 1,
      error: 'flaky',
    });
    await resume(world, id);
    expect(world.take().map((request) => [request.step, request.attempt])).toEqual([['fetch', 2]]);
  });

  it('holds a retry due at once (no retryDelay) until resume', async () => {
    const { world, id, fetch } = await started('        retries: 1\n');
    await pause(world, id);
    await world.reply(fetch, { error: 'flaky' }, { type: 'error' });
    expect(world.take()).toEqual([]);
    await resume(world, id);
    expect(world.take().map((request) => [request.step, request.attempt])).toEqual([['fetch', 2]]);
  });

  it('keeps a retry delay that has not ended at resume: its timer sends it', async () => {
    const { world, id, fetch } = await started('        retries: 1\n        retryDelay: 10s\n');
    await pause(world, id);
    await world.reply(fetch, { error: 'flaky' }, { type: 'error' });
    await resume(world, id);
    expect(world.take()).toEqual([]);
    await world.advance(10_000);
    expect(world.take().map((request) => [request.step, request.attempt])).toEqual([['fetch', 2]]);
  });

  it('lets a step timeout fail its attempt while paused, and the last one fail the job', async () => {
    const { world, id } = await started('        timeout: 5s\n');
    await pause(world, id);
    await world.advance(5_000);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'fetch', message: 'no reply within 5s (attempt 1)' });
  });

  it("lets the job's deadline fail a paused job", async () => {
    const { world, id } = await started('', '    timeout: 1m\n');
    await pause(world, id);
    await world.advance(60_000);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: null, message: 'the job did not finish within 1m' });
  });

  it('cancels a paused job', async () => {
    const { world, id, fetch } = await started();
    await pause(world, id);
    const cancelled = await world.manager.cancel(id);
    expect(cancelled.status).toBe('cancelled');
    await world.reply(fetch, {});
    await expect(world.manager.resume(id)).rejects.toThrow('the job is already cancelled');
    expect(world.take()).toEqual([]);
  });

  it('stores a signal sent to a paused job; the steps it makes ready wait for resume', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: approve
    steps:
      - name: wait
        type: signal
      - name: ship
        depends: [ wait ]
`);
    const id = await world.start('approve');
    await pause(world, id);
    const { job: signalled } = await world.manager.signal(id, 'wait', { ok: true });
    await world.manager.drain();
    expect(signalled.status).toBe('paused');
    expect(stepsOf(signalled).wait?.status).toBe('completed');
    expect(world.take()).toEqual([]);
    await resume(world, id);
    expect(world.take().map((request) => [request.step, request.body])).toEqual([['ship', { ok: true }]]);
  });

  const fan = (concurrency: number) => `workflows:
  - name: fan
    steps:
      - name: each
        task: t
    tasks:
      - name: t
        itemListKey: xs
        concurrency: ${concurrency}
        steps:
          - name: a
          - name: b
            depends: [ a ]
`;

  it('pauses the children of a fan-out (a child pauses its root), starts no child until resume, then runs each once', async () => {
    const world = new SimulatedWorld();
    await world.register(fan(2));
    const id = await world.start('fan', { xs: [0, 1, 2, 3, 4] });
    const first = world.take();
    expect(first.map((request) => request.body)).toEqual([{ x: 0 }, { x: 1 }]);
    // Pausing a child pauses the whole job.
    expect((await pause(world, first[0]!.jobId)).id).toBe(id);
    const children = async () =>
      (await world.store.listChildren(id, 'each', { limit: 10 })).children.map((child) => child.status);
    expect(await children()).toEqual(['paused', 'paused', 'waiting', 'waiting', 'waiting']);
    // The replies in flight are stored; nothing new goes out, not even the next child's turn.
    for (const request of first) await world.reply(request, {});
    expect(world.take()).toEqual([]);
    await resume(world, id);
    expect(await children()).toEqual(['running', 'running', 'waiting', 'waiting', 'waiting']);
    const seen: number[] = [];
    for (let round = 0; round < 20; round++) {
      const sent = world.take();
      if (!sent.length) break;
      for (const request of sent) {
        if (request.step === 'a') seen.push((request.body as { x: number }).x);
        await world.reply(request, { [request.step]: (request.body as { x: number }).x });
      }
    }
    expect(seen.sort()).toEqual([2, 3, 4]);
    const job = await world.job(id);
    expect(job.status).toBe('completed');
    expect(await children()).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
  });

  it("starts the children whose turn came while paused: a finished child's slot waits for resume", async () => {
    const world = new SimulatedWorld();
    await world.register(fan(2));
    const id = await world.start('fan', { xs: [0, 1, 2] });
    const [a0, a1] = world.take();
    await world.reply(a0!, {});
    const [b0] = world.take();
    await pause(world, id);
    await world.reply(b0!, {});
    const { children } = await world.store.listChildren(id, 'each', { limit: 10 });
    expect(children.map((child) => child.status)).toEqual(['completed', 'paused', 'waiting']);
    expect(world.take()).toEqual([]);
    await resume(world, id);
    expect(world.take().map((request) => [request.jobId, request.step])).toEqual([[children[2]!.id, 'a']]);
    void a1;
  });

  it('fans in while paused when the last children finish, and holds the step after', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: f
    steps:
      - name: each
        task: t
      - name: after
        depends: [ each ]
    tasks:
      - name: t
        itemListKey: xs
        steps: [ { name: w } ]
`);
    const id = await world.start('f', { xs: [1, 2] });
    const sent = world.take();
    await pause(world, id);
    for (const request of sent) await world.reply(request, { y: 1 });
    expect(world.take()).toEqual([]);
    expect(stepsOf(await world.job(id)).each?.status).toBe('completed');
    await resume(world, id);
    expect(world.take().map((request) => request.step)).toEqual(['after']);
  });

  it('cancels the paused children of a cancelled paused job', async () => {
    const world = new SimulatedWorld();
    await world.register(fan(2));
    const id = await world.start('fan', { xs: [0, 1, 2] });
    world.take();
    await pause(world, id);
    await world.manager.cancel(id);
    await world.manager.drain();
    const { children } = await world.store.listChildren(id, 'each', { limit: 10 });
    expect(children.map((child) => child.status)).toEqual(['cancelled', 'cancelled', 'waiting']);
  });
});
