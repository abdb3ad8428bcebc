import { describe, expect, it } from 'vitest';
import type { Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { memoryManager } from '../../support/memory-manager.js';

/**
 * One reply batch holding two replies of one job is applied as one write (combineTransitions): when
 * the later reply ends the job, the requests the earlier one made ready must not go out.
 */
const workflow = {
  name: 'two-ways',
  onFailure: 'tell',
  steps: [{ name: 'a' }, { name: 'b' }, { name: 'after-a', depends: ['a'], timeout: '1m' }],
};
const tell = { name: 'tell', steps: [{ name: 'note' }] };

const stores: { name: string; open: () => Store }[] = [
  { name: 'memory', open: () => new MemoryStore() },
  { name: 'SQLite', open: () => SqliteStore.open(':memory:') },
];

describe.each(stores)('Manager: a batch whose last reply stops the job ($name store)', ({ open }) => {
  for (const ending of [
    { status: 'aborted', reply: { type: 'abort', body: '{"reason": "no such order"}' } },
    { status: 'failed', reply: { type: 'error', body: '{"error": "declined"}', retryable: false } },
  ] as const) {
    it(`sends nothing for a step the batch made ready when the job ends ${ending.status}`, async () => {
      // Prepare
      const store = open();
      const harness = memoryManager({ store });
      await harness.manager.registerWorkflow(tell);
      await harness.manager.registerWorkflow(workflow);
      const { job } = await harness.manager.startJob({ workflow: 'two-ways' });
      await harness.manager.drain();
      expect(harness.bus.sent.map((request) => request.step).sort()).toEqual(['a', 'b']);

      // Act: a completes (after-a becomes ready), then b ends the job, in one batch.
      await harness.manager.handleReplies([
        { correlationId: `${job.id}:a`, body: '{"a": 1}', attempt: 1 },
        { correlationId: `${job.id}:b`, attempt: 1, ...ending.reply },
      ]);
      await harness.manager.drain();

      // Assess
      const stored = await store.getJob(job.id);
      expect(stored?.status).toBe(ending.status);
      expect(stored?.steps.find((step) => step.name === 'after-a')?.status).not.toBe('running');
      expect(harness.bus.sent.filter((request) => request.jobId === job.id).map((r) => r.step)).toEqual([
        'a',
        'b',
      ]);
      const pending = (await store.pendingOutbox({ limit: 100 })).entries;
      expect(pending.filter((entry) => entry.kind === 'request' && entry.jobId === job.id)).toEqual([]);
      // The onFailure job started all the same.
      expect(harness.bus.sent.filter((request) => request.step === 'note')).toHaveLength(1);
      await store.close();
    });
  }
});
