import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/index.js';
import { SimulatedWorld, T0 } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

async function world(yaml: string) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

const errors = (steps: string) =>
  loadWorkflows(`workflows:\n  - name: f\n    steps:\n${steps}`).errors.map((error) => error.message);

describe('Rules: steps that need no worker', () => {
  it('sleep: a duration waits on a durable timer, shown as sleepUntil, then passes its input on', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: wait
        sleep: 10m
      - name: after
        depends: [ wait ]
`);
    const id = await w.start('f', { x: 1 });
    expect(w.take()).toEqual([]);
    const sleeping = stepsOf(await w.job(id)).wait;
    expect(sleeping).toMatchObject({ status: 'running', sleepUntil: T0 + 600_000, deadline: T0 + 600_000 });
    await w.advance(599_999);
    expect(w.take()).toEqual([]);
    await w.advance(1);
    const [after] = w.take();
    expect(after).toMatchObject({ step: 'after', body: { x: 1 } });
    const woke = stepsOf(await w.job(id)).wait;
    expect(woke?.status).toBe('completed');
    expect(woke?.sleepUntil).toBeUndefined();
  });

  it('sleep until: a CEL time from the data; a time already past completes at once; a bad one fails the step naming it', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: wait
        sleep: { until: 'input.at' }
      - name: after
        depends: [ wait ]
`);
    const later = await w.start('f', { at: new Date(T0 + 3_600_000).toISOString() });
    expect(stepsOf(await w.job(later)).wait?.sleepUntil).toBe(T0 + 3_600_000);
    const past = await w.start('f', { at: '2020-01-01T00:00:00Z' });
    expect(w.take().map((request) => request.jobId)).toEqual([past]);
    const bad = await w.start('f', { at: 'tomorrow' });
    const job = await w.job(bad);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toMatch(/"sleep.until" expression "input.at": .*"tomorrow".*RFC 3339/);
    await w.advance(3_600_000);
    expect(w.take().map((request) => request.jobId)).toEqual([later]);
  });

  it('cancelling a sleeping job clears its timer', async () => {
    const w = await world('workflows:\n  - name: f\n    steps:\n      - name: wait\n        sleep: 1h\n');
    const id = await w.start('f', {});
    expect(w.timers.size).toBe(1);
    await w.manager.cancel(id);
    await w.manager.drain();
    expect(w.timers.size).toBe(0);
    expect(stepsOf(await w.job(id)).wait?.status).toBe('cancelled');
  });

  it('fail: the job fails with the message, evaluated over the input', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: check
      - name: reject
        depends: [ check ]
        when: input.amount > 100
        fail: { message: '"amount " + string(input.amount) + " is over the limit"' }
      - name: pay
        depends: [ check ]
        when: input.amount <= 100
`);
    const id = await w.start('f', { amount: 500 });
    await w.reply(w.take()[0] as never);
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'reject', message: 'amount 500 is over the limit' });
  });

  it('output: a pass step reshapes its input; on a worker step (with its queue) it reshapes the reply', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: shape
        output: '{"customer": input.order.customer, "total": input.order.total}'
      - name: price
        queue: price
        depends: [ shape ]
        output: '{"total": output.net * 1.2, "was": input.total}'
`);
    const id = await w.start('f', { order: { customer: 'ann', total: 10 } });
    const [price] = w.take();
    expect(price).toMatchObject({ step: 'price', queue: 'price', body: { customer: 'ann', total: 10 } });
    await w.reply(price as never, { net: 100 });
    const job = await w.job(id);
    expect(job).toMatchObject({ status: 'completed', result: { total: 120, was: 10 } });
  });

  it('output: an expression that cannot be evaluated fails the step, naming it', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: work
        queue: work
        retries: 3
        output: '{"v": output.missing.key}'
`);
    const id = await w.start('f', {});
    await w.reply(w.take()[0] as never, { ok: true });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain('"output" expression');
  });

  it('otherwise: runs when none of its siblings’ conditions held, and is skipped when one did', async () => {
    const w = await world(`workflows:
  - name: route
    steps:
      - name: load
      - name: big
        depends: [ load ]
        when: input.total > 1000
      - name: medium
        depends: [ load ]
        when: input.total > 100 && input.total <= 1000
      - name: small
        depends: [ load ]
        otherwise: true
`);
    for (const [total, branch] of [
      [5000, 'big'],
      [500, 'medium'],
      [5, 'small'],
    ] as const) {
      const id = await w.start('route', { total });
      await w.reply(w.take()[0] as never);
      expect(w.take().map((request) => request.step)).toEqual([branch]);
      if (branch !== 'small')
        expect(stepsOf(await w.job(id)).small?.skipReason).toBe('"otherwise": a sibling\'s "when" held');
    }
  });

  it('validation names what does not fit', () => {
    expect(errors('      - name: a\n        sleep: soon\n')[0]).toMatch(/"sleep" must be a duration/);
    expect(errors('      - name: a\n        sleep: { until: "1 + 1" }\n')[0]).toMatch(
      /"sleep.until" expression "1 \+ 1": it must give a timestamp/,
    );
    expect(errors('      - name: a\n        sleep: 1m\n        retries: 2\n')).toEqual([
      '"retries" does not apply to a "sleep" step: it sends nothing to a worker',
    ]);
    expect(errors("      - name: a\n        fail: { message: 'input.n' }\n        queue: q\n")).toEqual([
      '"queue" does not apply to a "fail" step: it sends nothing to a worker',
    ]);
    expect(errors("      - name: a\n        fail: 'no'\n")[0]).toMatch(
      /"fail" must be \{ message: CEL text \}/,
    );
    expect(errors('      - name: a\n        output: \'{"a": 1}\'\n        timeout: 5s\n')[0]).toMatch(
      /"timeout" does not apply to a pass step/,
    );
    expect(errors("      - name: a\n        when: 'output.x'\n")[0]).toMatch(
      /`output` is only seen by "output:" and "repeat.until"/,
    );
    expect(
      errors('      - name: a\n      - name: b\n        depends: [ a ]\n        otherwise: true\n')[0],
    ).toMatch(/"otherwise" needs siblings with "when:"/);
    expect(errors("      - name: a\n        when: 'true'\n        otherwise: true\n")[0]).toMatch(
      /"otherwise" and "when" on one step/,
    );
    const [workflow] = loadWorkflows(
      'workflows:\n  - name: f\n    steps:\n      - name: w\n        queue: w\n        output: \'{"a": 1}\'\n',
    ).workflows;
    expect(workflow?.steps[0]).toEqual({ name: 'w', queue: 'w', output: '{"a": 1}' });
  });
});
