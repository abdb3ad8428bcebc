import { describe, expect, it } from 'vitest';
import { signalStepsOf, signalWaits } from '../../../engine/job/waits.js';
import { SimulatedWorld, T0 } from '../../support/simulated-world.js';

const FLOWS = `workflows:
  - name: review
    steps:
      - name: draft
      - name: approve
        type: signal
        depends: [ draft ]
      - name: check
      - name: publish
        depends: [ approve, check ]
    tasks:
      - name: each-page
        itemListKey: pages
        steps:
          - name: sign
            type: signal
`;

async function world() {
  const w = new SimulatedWorld();
  await w.register(FLOWS);
  return w;
}

describe('Rules: the steps that wait for someone', () => {
  it("names a workflow's signal steps, or its task's for a fan-out child", async () => {
    const w = await world();
    const definition = (await w.store.getWorkflow('review'))?.definition;
    if (!definition) throw new Error('the workflow should be registered');
    expect([...signalStepsOf(definition, null)]).toEqual(['approve']);
    expect([...signalStepsOf(definition, 'each-page')]).toEqual(['sign']);
    expect([...signalStepsOf(definition, 'no-such-task')]).toEqual([]);
  });

  it('lists a running signal step and a suspended worker step with its note, since they began waiting', async () => {
    const w = await world();
    const signals = new Set(['approve']);
    const id = await w.start('review');
    // Nothing waits for anyone while the workers work.
    expect(signalWaits(await w.job(id), signals)).toEqual([]);
    const [draft, check] = w.take();
    await w.advance(1_000);
    await w.reply(draft!, {});
    await w.advance(2_000);
    await w.reply(check!, { reason: 'needs a second look' }, { type: 'suspend' });
    expect(signalWaits(await w.job(id), signals)).toEqual([
      { step: 'approve', kind: 'signal', since: T0 + 1_000 },
      { step: 'check', kind: 'suspended', since: T0 + 3_000, note: 'needs a second look' },
    ]);
    // Signalled: neither waits any more.
    await w.manager.signal(id, 'approve', {});
    await w.manager.signal(id, 'check', {});
    await w.manager.drain();
    expect(signalWaits(await w.job(id), signals)).toEqual([]);
  });

  it('does not take a running worker step for a signal step: only the definition says which wait', async () => {
    const w = await world();
    const id = await w.start('review');
    expect(signalWaits(await w.job(id), new Set())).toEqual([]);
    expect(signalWaits(await w.job(id), new Set(['check'])).map((wait) => wait.step)).toEqual(['check']);
  });
});
