import { describe, expect, it } from 'vitest';
import { type JsonObject, loadWorkflows } from '../../../engine/index.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

async function world(yaml: string) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

/** Replies to every request with its body plus `extra`, until nothing more is sent. */
async function runAll(w: SimulatedWorld, extra: Record<string, JsonObject> = {}): Promise<string[]> {
  const sent: string[] = [];
  for (let requests = w.take(); requests.length; requests = w.take()) {
    for (const request of requests) {
      sent.push(request.step);
      await w.reply(request, { ...request.body, ...extra[request.step] });
    }
  }
  return sent;
}

const GATE = (join: string) => `workflows:
  - name: publish-flow
    steps:
      - name: draft
      - name: approve
        depends: [ draft ]
        when: input.amount > 1000
      - name: publish
        depends: [ approve ]
${join ? `        join: ${join}\n` : ''}`;

describe('Rules: joins (join:)', () => {
  it('none_failed: an optional gate that was skipped does not cut the flow; the step gets what the gate would have', async () => {
    const w = await world(GATE('none_failed'));
    const id = await w.start('publish-flow', { amount: 10 });
    const sent = await runAll(w, { draft: { drafted: true }, publish: { published: true } });
    expect(sent).toEqual(['draft', 'publish']);
    const job = await w.job(id);
    expect(stepsOf(job).approve?.status).toBe('skipped');
    expect(w.sent.find((request) => request.step === 'publish')?.body).toEqual({ amount: 10, drafted: true });
    expect(job).toMatchObject({
      status: 'completed',
      result: { amount: 10, drafted: true, published: true },
    });
  });

  it('none_failed: when the gate runs, the step runs after it on its output', async () => {
    const w = await world(GATE('none_failed'));
    const id = await w.start('publish-flow', { amount: 5000 });
    const sent = await runAll(w, { approve: { approvedBy: 'ann' } });
    expect(sent).toEqual(['draft', 'approve', 'publish']);
    expect(w.sent.find((request) => request.step === 'publish')?.body).toEqual({
      amount: 5000,
      approvedBy: 'ann',
    });
    expect((await w.job(id)).status).toBe('completed');
  });

  it('all_completed (the default): a step whose only dependency was skipped is skipped, and the job returns the last completed outputs', async () => {
    const w = await world(GATE(''));
    const id = await w.start('publish-flow', { amount: 10 });
    expect(await runAll(w, { draft: { drafted: true } })).toEqual(['draft']);
    const job = await w.job(id);
    expect(stepsOf(job).publish).toMatchObject({
      status: 'skipped',
      skipReason: 'every step it depends on was skipped',
    });
    expect(job).toMatchObject({ status: 'completed', result: { amount: 10, drafted: true } });
  });

  it('none_failed: a dependency that failed (handled) skips the step, naming why', async () => {
    const w = await world(`workflows:
  - name: f
    steps:
      - name: charge
        continueOnError: true
      - name: receipt
        depends: [ charge ]
        join: none_failed
      - name: refund
        depends: [ charge ]
`);
    const id = await w.start('f', {});
    const [charge] = w.take();
    await w.reply(charge as never, { error: 'card declined' }, { type: 'error' });
    expect(await runAll(w)).toEqual(['refund']);
    const job = await w.job(id);
    expect(stepsOf(job).receipt).toMatchObject({
      status: 'skipped',
      skipReason: 'join none_failed: a step it depends on failed',
    });
    expect(job.status).toBe('completed');
  });

  it('any_completed: runs as soon as the first dependency completes, once, and the others finish after it', async () => {
    const w = await world(`workflows:
  - name: race
    steps:
      - name: mirror-a
      - name: mirror-b
      - name: use
        depends: [ mirror-a, mirror-b ]
        join: any_completed
`);
    const id = await w.start('race', {});
    const requests = w.take();
    const b = requests.find((request) => request.step === 'mirror-b');
    await w.reply(b as never, { from: 'b' });
    const [use] = w.take();
    expect(use).toMatchObject({ step: 'use', body: { from: 'b' } });
    const a = requests.find((request) => request.step === 'mirror-a');
    await w.reply(a as never, { from: 'a' });
    expect(w.take()).toEqual([]);
    await w.reply(use as never, { used: true });
    const job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(stepsOf(job).use?.attempts).toBe(1);
  });

  it('any_completed: skipped when every dependency settled and none completed', async () => {
    const w = await world(`workflows:
  - name: race
    steps:
      - name: a
        when: input.go
      - name: b
        when: input.go
      - name: use
        depends: [ a, b ]
        join: any_completed
`);
    const id = await w.start('race', { go: false });
    const job = await w.job(id);
    expect(stepsOf(job).use).toMatchObject({
      status: 'skipped',
      skipReason: 'join any_completed: none of the steps it depends on completed',
    });
    expect(job).toMatchObject({ status: 'completed', result: {} });
  });

  it('validation: __start__ with other dependencies is refused, alone it means none; join needs depends and a known rule', () => {
    const errors = (step: string) =>
      loadWorkflows(
        `workflows:\n  - name: f\n    steps:\n      - name: a\n      - name: b\n${step}`,
      ).errors.map((error) => error.message);
    expect(errors('        depends: [ __start__, a ]\n')[0]).toMatch(
      /"__start__" with other dependencies.*join: none_failed/,
    );
    expect(errors('        depends: [ __start__ ]\n')).toEqual([]);
    expect(errors('        join: none_failed\n')).toEqual([
      '"join" applies only to a step with "depends": it says which of them it waits for',
    ]);
    expect(errors('        depends: [ a ]\n        join: some\n')).toEqual([
      '"join" must be one of all_completed, none_failed, any_completed, got "some"',
    ]);
    const [workflow] = loadWorkflows(
      'workflows:\n  - name: f\n    steps:\n      - name: a\n      - name: b\n        depends: [ a ]\n        join: all_completed\n',
    ).workflows;
    expect(workflow?.steps[1]).toEqual({ name: 'b', depends: ['a'] });
  });
});
