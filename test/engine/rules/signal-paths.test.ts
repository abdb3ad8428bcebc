import { describe, expect, it } from 'vitest';
import { parseStepPath } from '../../../engine/index.js';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOWS = `workflows:
  - name: order
    steps:
      - name: publish
        workflow: review
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: ok
            type: signal
  - name: review
    steps:
      - name: prepare
      - name: approve
        type: signal
        depends: [ prepare ]
`;

describe('Rules: a signal reaches a step of a called job or a fan-out child by its path', () => {
  it("publish/approve reaches the called job's step (kept there until it is ready); each[1]/ok a child's", async () => {
    const w = new SimulatedWorld();
    await w.register(FLOWS);
    const id = await w.start('order', { items: ['a', 'b', 'c'] });
    const called = stepsOf(await w.job(id)).publish?.job as string;
    const { job, kept } = await w.manager.signal(id, 'publish/approve', { by: 'ana' });
    expect(job.id).toBe(called);
    expect(kept).toBe('step "approve" is not ready yet');
    await w.reply(w.take().find((request) => request.step === 'prepare')!, { doc: 1 });
    await w.manager.drain();
    expect(stepsOf(await w.job(called)).approve).toMatchObject({
      status: 'completed',
      output: { doc: 1, by: 'ana' },
    });
    expect(stepsOf(await w.job(id)).publish?.status).toBe('completed');

    const child = await w.manager.signal(id, 'each[1]/ok', { fine: true });
    expect(child.job.parent).toMatchObject({ id, step: 'each', index: 1 });
    expect(stepsOf(child.job).ok?.status).toBe('completed');
  });

  it('refuses a path that does not lead to a job, naming the hop', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOWS);
    const id = await w.start('order', { items: ['a'] });
    expect(await refusal(w.manager.signal(id, 'each/ok', {}))).toEqual({
      code: 'invalid',
      message: 'step "each" is a fan-out: name one of its children as each[index]',
    });
    expect(await refusal(w.manager.signal(id, 'publish[0]/approve', {}))).toEqual({
      code: 'invalid',
      message: 'step "publish" is a workflow: step, not a fan-out: name it without [index]',
    });
    expect((await refusal(w.manager.signal(id, 'each[1]/ok', {}))).message).toBe(
      `step "each" of job ${id} has 1 children (0 to 0)`,
    );
    expect((await refusal(w.manager.signal(id, 'nope/approve', {}))).message).toBe(
      `job ${id} has no step "nope"`,
    );
  });

  it('parses paths: hops through calls and fan-out children, then a step', () => {
    expect(parseStepPath('a[0]/b/c')).toEqual({ hops: [{ step: 'a', index: 0 }, { step: 'b' }], step: 'c' });
    expect(parseStepPath('approve')).toEqual({ hops: [], step: 'approve' });
    expect(parseStepPath('a/b[1]')).toEqual({ error: '"b[1]" is not a step name' });
  });
});
