import { describe, expect, it } from 'vitest';
import { SimulatedWorld } from '../../support/simulated-world.js';

/**
 * A fan-out child's worker aborted: the child ends `aborted`, its top-level job too. Retrying the
 * job runs the fan-out step again: the aborted child must run again with the cancelled ones, as a
 * failed child would, or the step waits for it forever.
 */
describe('Rules: retrying a job a fan-out child aborted', () => {
  const FLOW = `workflows:
  - name: batch
    steps:
      - name: each
        task: per-item
      - name: sum
        depends: [ each ]
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`;

  for (const concurrency of ['all', 1] as const) {
    it(`runs the aborted child again and completes (concurrency ${concurrency})`, async () => {
      const w = new SimulatedWorld();
      await w.register(
        concurrency === 'all'
          ? FLOW
          : FLOW.replace('itemListKey: items', 'itemListKey: items\n        concurrency: 1'),
      );
      const id = await w.start('batch', { items: [1, 2, 3] });
      let requests = w.take();
      if (concurrency === 1) {
        await w.reply(requests[0]!, { item: 10 });
        requests = w.take();
      } else {
        await w.reply(requests[0]!, { item: 10 });
        requests = requests.slice(1);
      }
      await w.reply(requests[0]!, { reason: 'poisoned item' }, { type: 'abort' });
      expect((await w.job(id)).status).toBe('aborted');
      w.take();

      await w.manager.retry(id);
      await w.manager.drain();
      for (let round = 0; round < 5; round++) {
        const more = w.take();
        if (!more.length) break;
        for (const request of more.filter((r) => r.step === 'work'))
          await w.reply(request, { item: Number(request.body.item) * 10 });
        for (const request of more.filter((r) => r.step === 'sum')) await w.reply(request, { done: true });
        await w.manager.drain();
      }
      const job = await w.job(id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ done: true });
    });
  }
});
