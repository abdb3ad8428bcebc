import { describe, expect, it } from 'vitest';
import { runFanOutResends } from '../support/fan-out-resends.js';
import { reportFigures } from '../support/soak.js';

/** SIGKILLs of serve while 5,000-child fan-outs send their requests: few requests go twice. */
describe('Soak: re-sends after crashes in the middle of large fan-outs', () => {
  it('re-sends under 5% of the requests', async () => {
    const figures = await runFanOutResends({ fanOuts: 4, children: 5_000, kills: 4 });
    reportFigures('fan-out re-sends after SIGKILLs (soak)', figures);
    expect(figures.completed).toBe(4);
    expect(figures.duplicateShare).toBeLessThan(0.05);
  });
});
