import { describe, expect, it } from 'vitest';
import type { StepRequest } from '../../../engine/index.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const limited = (max: number | undefined, name = 'limited') => `workflows:
  - name: ${name}
${max === undefined ? '' : `    maxRunning: ${max}\n`}    steps:
      - name: work
`;

async function world(max: number | undefined = 2) {
  const w = new SimulatedWorld();
  await w.register(limited(max));
  return w;
}

async function startMany(w: SimulatedWorld, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await w.start('limited', { i }));
  return ids;
}

async function statuses(w: SimulatedWorld, ids: readonly string[]) {
  return Promise.all(ids.map(async (id) => (await w.job(id)).status));
}

/** The request a job was sent for its one step. */
function requestOf(sent: readonly StepRequest[], id: string): StepRequest {
  const request = sent.find((r) => r.jobId === id);
  if (!request) throw new Error(`job ${id} was sent nothing`);
  return request;
}

describe('Rules: maxRunning', () => {
  it('runs at most N jobs and queues the rest, sending them nothing', async () => {
    const w = await world(2);
    const ids = await startMany(w, 4);
    expect(await statuses(w, ids)).toEqual(['running', 'running', 'queued', 'queued']);
    expect(w.take().map((r) => r.jobId)).toEqual(ids.slice(0, 2));
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 2, queued: 2, nextSeq: 2 });
    expect((await w.store.listQueued('limited', 10)).map((q) => q.jobId)).toEqual(ids.slice(2));
  });

  it('starts queued jobs in the order they were started as others end, whatever the end', async () => {
    const w = await world(1);
    const ids = await startMany(w, 4);
    let sent = w.take();
    await w.reply(requestOf(sent, ids[0]!), {});
    expect(await statuses(w, ids)).toEqual(['completed', 'running', 'queued', 'queued']);
    sent = w.take();
    await w.deliver([
      { correlationId: requestOf(sent, ids[1]!).correlationId, body: '{"error":"x"}', type: 'error' },
    ]);
    expect(await statuses(w, ids)).toEqual(['completed', 'failed', 'running', 'queued']);
    expect(w.take().map((r) => r.jobId)).toEqual([ids[2]]);
    await w.manager.cancel(ids[2]!);
    await w.manager.drain();
    expect(await statuses(w, ids)).toEqual(['completed', 'failed', 'cancelled', 'running']);
    expect(w.take().map((r) => r.jobId)).toEqual([ids[3]]);
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 1, queued: 0, nextSeq: 3 });
  });

  it('takes a cancelled queued job out of the queue without using a slot', async () => {
    const w = await world(1);
    const ids = await startMany(w, 3);
    const cancelled = await w.manager.cancel(ids[1]!);
    await w.manager.drain();
    expect(cancelled.status).toBe('cancelled');
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 1, queued: 1, nextSeq: 2 });
    await w.reply(requestOf(w.take(), ids[0]!), {});
    expect(await statuses(w, ids)).toEqual(['completed', 'cancelled', 'running']);
  });

  it('keeps the slot of a paused job, and refuses to pause a queued one', async () => {
    const w = await world(1);
    const ids = await startMany(w, 2);
    await w.manager.pause(ids[0]!);
    await w.manager.drain();
    expect(await statuses(w, ids)).toEqual(['paused', 'queued']);
    await expect(w.manager.pause(ids[1]!)).rejects.toThrow(ManagerError);
    await w.manager.cancel(ids[0]!);
    await w.manager.drain();
    expect(await statuses(w, ids)).toEqual(['cancelled', 'running']);
  });

  it('starts the timeout of a queued job only when it leaves the queue', async () => {
    const w = new SimulatedWorld();
    await w.register(`workflows:
  - name: limited
    maxRunning: 1
    timeout: 1m
    steps:
      - name: work
`);
    const ids = await startMany(w, 2);
    await w.advance(50_000);
    await w.reply(requestOf(w.take(), ids[0]!), {});
    await w.advance(50_000);
    expect(await statuses(w, ids)).toEqual(['completed', 'running']);
    await w.advance(20_000);
    expect(await statuses(w, ids)).toEqual(['completed', 'failed']);
  });

  it('admits a retried job as a new start: queued behind others when every slot is taken', async () => {
    const w = await world(1);
    const [first, second] = await startMany(w, 2);
    await w.manager.cancel(first!);
    await w.manager.drain();
    expect(await statuses(w, [first!, second!])).toEqual(['cancelled', 'running']);
    const retried = await w.manager.retry(first!);
    await w.manager.drain();
    expect(retried.status).toBe('queued');
    await w.reply(requestOf(w.take(), second!), {});
    expect(await statuses(w, [first!, second!])).toEqual(['running', 'completed']);
  });

  it('applies a new version’s limit to new starts and promotions: raising it starts queued jobs at once', async () => {
    const w = await world(1);
    const ids = await startMany(w, 4);
    await w.register(limited(3));
    expect(await statuses(w, ids)).toEqual(['running', 'running', 'running', 'queued']);
    await w.register(limited(undefined));
    expect(await statuses(w, ids)).toEqual(['running', 'running', 'running', 'running']);
    // Jobs that took a slot give it back; those started without a limit never took one.
    for (const request of w.take()) await w.reply(request, {});
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 0, queued: 0, nextSeq: 3 });
  });

  it('lowering the limit lets running jobs finish and starts none until fewer run', async () => {
    const w = await world(3);
    const ids = await startMany(w, 4);
    await w.register(limited(1));
    const sent = w.take();
    await w.reply(requestOf(sent, ids[0]!), {});
    await w.reply(requestOf(sent, ids[1]!), {});
    expect(await statuses(w, ids)).toEqual(['completed', 'completed', 'running', 'queued']);
    await w.reply(requestOf(sent, ids[2]!), {});
    expect(await statuses(w, ids)).toEqual(['completed', 'completed', 'completed', 'running']);
  });

  it('counts only top-level jobs: a fan-out’s children do not take slots', async () => {
    const w = new SimulatedWorld();
    await w.register(`workflows:
  - name: limited
    maxRunning: 1
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`);
    const id = await w.start('limited', { items: [1, 2, 3] });
    expect(w.take()).toHaveLength(3);
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 1, queued: 0, nextSeq: 0 });
    expect((await w.job(id)).holdsSlot).toBe(true);
  });

  it('keeps signals to a queued job, and ends an aborted queued job without a slot, dropping them', async () => {
    const w = new SimulatedWorld();
    await w.register(`workflows:
  - name: limited
    maxRunning: 1
    steps:
      - name: approve
        type: signal
`);
    const [first, second] = [await w.start('limited'), await w.start('limited')];
    expect((await w.manager.signal(second!, 'approve', {})).kept).toBe('step "approve" is not ready yet');
    await w.manager.apply([{ jobId: second!, event: { type: 'abort', reason: 'stop' } }]);
    await w.manager.drain();
    expect((await w.job(second!)).pendingSignals).toBeUndefined();
    expect(await statuses(w, [first!, second!])).toEqual(['running', 'aborted']);
    expect(await w.store.getRunningCount('limited')).toEqual({ running: 1, queued: 0, nextSeq: 1 });
  });
});
