import { describe, expect, it } from 'vitest';
import { listedStatusOf, loadWorkflows } from '../../../engine/index.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const FLOWS = `workflows:
  - name: review
    searchAttributes:
      customer: input.customer
      amount: input.order.amount
      rush: input.rush
      nested: input.order
    steps:
      - name: draft
      - name: approve
        type: signal
        depends: [ draft ]
      - name: check
      - name: publish
        depends: [ approve, check ]
`;

async function world() {
  const w = new SimulatedWorld();
  await w.register(FLOWS);
  return w;
}

describe('Rules: a job waiting for someone is listed as waiting', () => {
  it('is running while its workers work, waiting while a signal step or a suspended step waits, running again once signalled', async () => {
    const w = await world();
    const id = await w.start('review', { customer: 'c-42' });
    expect(listedStatusOf(await w.job(id))).toBe('running');
    const [draft, check] = w.take();
    await w.reply(draft!, {});
    // The signal step runs: the job waits for someone, though `check` still runs.
    expect(listedStatusOf(await w.job(id))).toBe('waiting');
    await w.manager.signal(id, 'approve', {});
    await w.manager.drain();
    expect(listedStatusOf(await w.job(id))).toBe('running');
    await w.reply(check!, { reason: 'ask finance' }, { type: 'suspend' });
    expect(listedStatusOf(await w.job(id))).toBe('waiting');
    // Paused, it is paused; resumed, it waits again (its suspended step was not touched meanwhile).
    await w.manager.pause(id);
    await w.manager.drain();
    expect(listedStatusOf(await w.job(id))).toBe('paused');
    await w.manager.resume(id);
    await w.manager.drain();
    expect(listedStatusOf(await w.job(id))).toBe('waiting');
    await w.manager.signal(id, 'check', {});
    await w.manager.drain();
    expect(listedStatusOf(await w.job(id))).not.toBe('waiting');
  });

  it('lists a job not started as pending', () => {
    expect(listedStatusOf({ status: 'waiting' })).toBe('pending');
    expect(listedStatusOf({ status: 'running' })).toBe('running');
    expect(listedStatusOf({ status: 'paused', waitsForSomeone: true })).toBe('paused');
    expect(listedStatusOf({ status: 'failed', waitsForSomeone: true })).toBe('failed');
  });
});

describe('Rules: search attributes', () => {
  it('are evaluated over the input at the start, as text; those without a value are left out', async () => {
    const w = await world();
    const id = await w.start('review', { customer: 'c-42', order: { amount: 12.5 }, rush: true });
    expect((await w.job(id)).attributes).toEqual({ customer: 'c-42', amount: '12.5', rush: 'true' });
    // A missing field gives no value, and never stops the job.
    const bare = await w.start('review', {});
    const job = await w.job(bare);
    expect(job.attributes).toBeUndefined();
    expect(job.status).toBe('running');
  });

  it('are refused with a clear message when a name or an expression is wrong, or there are too many', () => {
    const check = (attributes: string) =>
      loadWorkflows(
        `workflows:\n  - name: w\n    searchAttributes: ${attributes}\n    steps: [ { name: a } ]\n`,
      ).errors.map((error) => error.message);
    expect(check('{ customer: input.customer }')).toEqual([]);
    expect(check('[ customer ]').join()).toMatch(/"searchAttributes" must be a mapping/);
    expect(check('{ "1st": input.a }').join()).toMatch(/must start with a letter/);
    expect(check('{ customer: "input.(" }').join()).toMatch(/search attribute "customer" expression/);
    expect(check('{ customer: 3 }').join()).toMatch(/must be a CEL expression/);
    const many = `{ ${Array.from({ length: 11 }, (_, n) => `a${n}: input.a`).join(', ')} }`;
    expect(check(many).join()).toMatch(/at most 10/);
  });
});
