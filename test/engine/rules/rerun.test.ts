import { describe, expect, it } from 'vitest';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOW = `workflows:
  - name: publish
    steps:
      - name: fetch
      - name: approve
        type: signal
        depends: [ fetch ]
      - name: decide
        depends: [ approve ]
      - name: ship
        depends: [ decide ]
      - name: audit
        depends: [ fetch ]
`;

/** A job of FLOW run to its end: decide fails on a signal without the key it needs. */
async function failedJob() {
  const w = new SimulatedWorld();
  await w.register(FLOW);
  const id = await w.start('publish', { doc: 1 });
  await w.reply(w.take()[0]!, { doc: 1, fetched: true });
  await w.manager.signal(id, 'approve', { note: 'no decision key' });
  await w.manager.drain();
  for (const request of w.take()) {
    if (request.step === 'decide')
      await w.reply(request, { error: 'No such key: decision' }, { type: 'error', retryable: false });
    else await w.reply(request, {});
  }
  expect((await w.job(id)).status).toBe('failed');
  return { w, id };
}

describe('Rules: rerun an ended job from a step, with a new input', () => {
  it('runs the step and the steps after it again, keeps the outputs before it, and keeps the old attempts in the history', async () => {
    const { w, id } = await failedJob();
    await w.manager.rerun(id, 'approve', { doc: 1, fetched: true, decision: 'yes' });
    await w.manager.drain();
    let job = await w.job(id);
    // approve is a signal step: its new input is its output at once; decide is sent with it.
    expect(stepsOf(job).approve).toMatchObject({
      status: 'completed',
      output: { doc: 1, fetched: true, decision: 'yes' },
    });
    expect(stepsOf(job).approve?.pastAttempts?.map((attempt) => attempt.outcome)).toEqual(['completed']);
    expect(stepsOf(job).fetch).toMatchObject({
      status: 'completed',
      attempts: 1,
      output: { doc: 1, fetched: true },
    });
    expect(stepsOf(job).audit).toMatchObject({ status: 'completed', attempts: 1 });
    const [decide] = w.take();
    expect(decide).toMatchObject({
      step: 'decide',
      attempt: 2,
      body: { doc: 1, fetched: true, decision: 'yes' },
    });
    await w.reply(decide!, { decided: true });
    await w.reply(w.take()[0]!, { shipped: true });
    job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(stepsOf(job).decide?.pastAttempts?.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'error'],
    ]);
  });

  it('a worker step rerun with a new input is sent that input', async () => {
    const { w, id } = await failedJob();
    await w.manager.rerun(id, 'decide', { decision: 'no' });
    await w.manager.drain();
    expect(w.take()).toMatchObject([{ step: 'decide', attempt: 2, body: { decision: 'no' } }]);
    expect(stepsOf(await w.job(id)).decide?.input).toEqual({ decision: 'no' });
  });

  it('is refused for a job still running (409), an unknown step (400), and changes nothing', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOW);
    const id = await w.start('publish', {});
    expect(await refusal(w.manager.rerun(id, 'fetch'))).toEqual({
      code: 'conflict',
      message: 'only an ended job can be rerun; this one is running',
    });
    const { w: ended, id: endedId } = await failedJob();
    const before = await ended.job(endedId);
    expect(await refusal(ended.manager.rerun(endedId, 'nope'))).toEqual({
      code: 'invalid',
      message: `job ${endedId} has no step "nope"`,
    });
    expect((await ended.job(endedId)).rev).toBe(before.rev);
  });
});
