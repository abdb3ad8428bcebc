import { describe, expect, it } from 'vitest';
import { jobDocument } from '../../../functions/api/job-document.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const FLOW = `workflows:
  - name: audited
    steps:
      - name: fetch
        timeout: 10s
        retries: 3
`;

describe('Rules: every attempt is kept', () => {
  it('lists each attempt with when it was sent and ended and how: error, timeout, suspend, then completed', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOW);
    const id = await w.start('audited', {});
    const t0 = w.now;
    await w.reply(w.take()[0]!, { error: 'disk full' }, { type: 'error' });
    await w.advance(10_000);
    await w.reply(w.take()[0]!, {}, { type: 'suspend', attempt: 3 });
    await w.manager.signal(id, 'fetch', { ok: true });
    await w.manager.drain();
    await w.advance(1_000);
    await w.reply(w.take()[0]!, { done: true }, { attempt: 4 });
    const document = await jobDocument(w.store, await w.job(id));
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(document.steps.fetch?.attempt).toBe(4);
    expect(document.steps.fetch?.attempts).toEqual([
      { attempt: 1, sentAt: iso(t0), endedAt: iso(t0), outcome: 'error', error: 'disk full' },
      {
        attempt: 2,
        sentAt: iso(t0),
        endedAt: iso(t0 + 10_000),
        outcome: 'timeout',
        error: 'no reply within 10s (attempt 2)',
      },
      { attempt: 3, sentAt: iso(t0 + 10_000), endedAt: iso(t0 + 10_000), outcome: 'suspended' },
      { attempt: 4, sentAt: iso(t0 + 10_000), endedAt: iso(t0 + 11_000), outcome: 'completed' },
    ]);
  });

  it('ends a running attempt as cancelled when the job is cancelled', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOW);
    const id = await w.start('audited', {});
    await w.manager.cancel(id);
    const document = await jobDocument(w.store, await w.job(id));
    expect(document.steps.fetch?.attempts).toMatchObject([{ attempt: 1, outcome: 'cancelled' }]);
  });
});
