import { afterEach, describe, expect, it } from 'vitest';
import type { InboundReply, Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { type MemoryManager, memoryManager, storeRefusing } from '../../support/memory-manager.js';

const workflow = {
  name: 'greet',
  steps: [{ name: 'hello' }, { name: 'bye', depends: ['hello'] }],
};

const stores: { name: string; open: () => Store }[] = [
  { name: 'memory', open: () => new MemoryStore() },
  { name: 'SQLite', open: () => SqliteStore.open(':memory:') },
];

const reply = (jobId: string, body: string): InboundReply => ({
  correlationId: `${jobId}:hello`,
  body,
  attempt: 1,
});

describe.each(stores)('Manager: a reply batch with poison in it ($name store)', ({ open }) => {
  let inner: Store;
  afterEach(async () => {
    await inner?.close();
  });

  async function started(
    refused: Set<string>,
    count: number,
  ): Promise<{ harness: MemoryManager; ids: string[] }> {
    inner = open();
    const harness = memoryManager({ store: storeRefusing(inner, refused) });
    await harness.manager.registerWorkflow(workflow);
    const ids: string[] = [];
    for (let n = 0; n < count; n++) ids.push((await harness.manager.startJob({ workflow: 'greet' })).job.id);
    await harness.manager.drain();
    return { harness, ids };
  }

  it('completes the good replies, records why for the one that cannot be stored, and acknowledges all', async () => {
    // Prepare
    const refused = new Set<string>();
    const { harness, ids } = await started(refused, 4);
    const [good, poisoned, alsoGood, broken] = ids as [string, string, string, string];
    refused.add(broken);

    // Act
    await harness.manager.handleReplies([
      reply(good, '{"n": 1}'),
      reply(poisoned, '{"poison": true}'),
      reply(alsoGood, '{"n": 3}'),
      reply(broken, '{"n": 4}'),
    ]);
    await harness.manager.drain();

    // Assess
    for (const id of [good, alsoGood])
      expect((await inner.getJob(id))?.steps.get(0)?.status).toBe('completed');
    expect(
      harness.bus.sent.filter((request) => request.step === 'bye').map((request) => request.jobId),
    ).toEqual([good, alsoGood]);
    const failed = await inner.getJob(poisoned);
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatchObject({
      step: 'hello',
      attempt: 1,
      message: 'the reply could not be stored: RangeError: Maximum call stack size exceeded',
    });
    // Not even a failed attempt could be stored for it: logged, counted and let go.
    expect((await inner.getJob(broken))?.steps.get(0)?.status).toBe('running');
    expect(harness.telemetry.counted('replies_dropped_total')).toBe(1);
    expect(
      harness.telemetry.logged('reply dropped: neither it nor a failed attempt could be stored'),
    ).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({ correlationId: `${broken}:hello`, error: expect.any(Error) }),
      }),
    ]);
  });

  it('fails the attempt of a poison reply that comes alone, and acknowledges it', async () => {
    // Prepare
    const { harness, ids } = await started(new Set(), 1);
    const [poisoned] = ids as [string];

    // Act
    await harness.manager.handleReplies([reply(poisoned, '{"poison": true}')]);

    // Assess
    expect((await inner.getJob(poisoned))?.error?.message).toBe(
      'the reply could not be stored: RangeError: Maximum call stack size exceeded',
    );
    expect(harness.telemetry.counted('replies_dropped_total')).toBe(0);
  });

  it('hands a batch back while nothing in it can be stored (an outage), and lets go of it after 10 tries over 10 minutes', async () => {
    // Prepare
    const refused = new Set<string>();
    const { harness, ids } = await started(refused, 2);
    const [first, second] = ids as [string, string];
    refused.add(first);
    refused.add(second);
    const batch = [reply(first, '{}'), reply(second, '{}')];

    const handled = (): Promise<boolean> =>
      harness.manager.handleReplies(batch).then(
        () => true,
        () => false,
      );

    // Act: 12 tries within the first minutes, then one more 10 minutes after the first
    const early: boolean[] = [];
    for (let n = 0; n < 12; n++) {
      early.push(await handled());
      harness.now.value += 10_000;
    }
    const droppedBefore = harness.telemetry.counted('replies_dropped_total');
    harness.now.value += 10 * 60_000;
    const late = await handled();

    // Assess
    expect(early).toEqual(new Array(12).fill(false));
    expect(droppedBefore).toBe(0);
    expect(late).toBe(true);
    expect(harness.telemetry.counted('replies_dropped_total')).toBe(2);
    for (const id of ids) expect((await inner.getJob(id))?.steps.get(0)?.status).toBe('running');
  });
});
