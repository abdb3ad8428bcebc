import { describe, expect, it } from 'vitest';
import { DEFAULT_SEND_BATCH } from '../../functions/manager/outbox-pump.js';
import { runFanOutResends } from '../support/fan-out-resends.js';
import { reportFigures } from '../support/soak.js';

/** SIGKILLs of serve while 5,000-child fan-outs send their requests: few requests go twice. */
describe('Soak: re-sends after crashes in the middle of large fan-outs', () => {
  it('re-sends at most the batch in hand at each kill', async () => {
    const figures = await runFanOutResends({ fanOuts: 4, children: 5_000, kills: 4 });
    reportFigures('fan-out re-sends after SIGKILLs (soak)', figures);
    expect(figures.completed).toBe(4);
    // In a burst, a batch is recorded as sent before the next goes: a kill re-sends the batch out at
    // that moment and nothing before it. When that record could wait for the next write, a kill
    // re-sent two batches: 1,000 of 20,000 in one run of four.
    expect(figures.duplicates).toBeLessThanOrEqual(figures.kills * DEFAULT_SEND_BATCH);
  });
});
