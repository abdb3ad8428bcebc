import { describe, expect, it } from 'vitest';
import { onFailureJobId } from '../../../engine/job/on-failure.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

async function world(yaml: string) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

describe('Rules: a worker aborts the job', () => {
  const FLOWS = `workflows:
  - name: import
    onFailure: alert
    steps:
      - name: fetch
        retries: 5
      - name: parse
      - name: store
        depends: [ fetch, parse ]
  - name: alert
    steps:
      - name: page
`;

  it('ends the whole job as aborted, whatever its retries, cancels the rest and starts onFailure', async () => {
    const w = await world(FLOWS);
    const id = await w.start('import', {});
    const [fetch, parse] = w.take();
    await w.reply(fetch!, { reason: 'the source was withdrawn' }, { type: 'abort' });
    const job = await w.job(id);
    expect(job.status).toBe('aborted');
    expect(job.error).toMatchObject({
      step: 'fetch',
      message: 'aborted by the worker: the source was withdrawn',
    });
    expect(stepsOf(job).fetch).toMatchObject({ status: 'failed', error: job.error?.message });
    expect(stepsOf(job).parse?.status).toBe('cancelled');
    expect(stepsOf(job).store?.status).toBe('waiting');
    const alert = await w.job(onFailureJobId(id, 1));
    expect(alert.input.error).toMatchObject({ message: 'aborted by the worker: the source was withdrawn' });
    expect(w.take().map((request) => request.step)).toEqual(['page']);
    await w.reply(parse!, {});
    expect((await w.job(id)).status).toBe('aborted');
    expect(stepsOf(await w.job(id)).parse?.status).toBe('cancelled');
  });

  it('an abort from a fan-out child aborts its top-level job and cancels the other children', async () => {
    const w = await world(`workflows:
  - name: batch
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`);
    const id = await w.start('batch', { items: [1, 2, 3] });
    const children = w.take();
    await w.reply(children[1]!, { reason: 'poisoned item' }, { type: 'abort' });
    const job = await w.job(id);
    expect(job.status).toBe('aborted');
    expect(job.error?.message).toBe('aborted: poisoned item');
    const statuses = await Promise.all(children.map(async (request) => (await w.job(request.jobId)).status));
    expect(statuses).toEqual(['cancelled', 'aborted', 'cancelled']);
  });

  it('an aborted job can be retried', async () => {
    const w = await world(FLOWS);
    const id = await w.start('import', {});
    await w.reply(w.take()[0]!, { reason: 'stop' }, { type: 'abort' });
    w.take();
    await w.manager.retry(id);
    await w.manager.drain();
    expect(w.take().map((request) => request.step)).toEqual(['fetch', 'parse']);
  });
});

describe('Rules: a worker suspends its step', () => {
  const FLOW = `workflows:
  - name: approval
    steps:
      - name: ask
        timeout: 30s
        retries: 1
      - name: done
        depends: [ ask ]
`;

  it('waits without timeout until a signal, then is sent again with the signal under "signal"', async () => {
    const w = await world(FLOW);
    const id = await w.start('approval', { doc: 7 });
    const [first] = w.take();
    await w.reply(first!, {}, { type: 'suspend' });
    expect(stepsOf(await w.job(id)).ask?.status).toBe('suspended');
    await w.advance(3_600_000);
    expect((await w.job(id)).status).toBe('running');
    await w.reply(first!, { late: true });
    expect(stepsOf(await w.job(id)).ask?.status).toBe('suspended');
    await w.manager.signal(id, 'ask', { approved: true });
    await w.manager.drain();
    const [again] = w.take();
    expect(again).toMatchObject({ step: 'ask', attempt: 2, body: { doc: 7, signal: { approved: true } } });
    await w.reply(again!, { error: 'flaky' }, { type: 'error', attempt: 2 });
    const [retry] = w.take();
    expect(retry).toMatchObject({ attempt: 3, body: { doc: 7, signal: { approved: true } } });
    await w.reply(retry!, { approved: true }, { attempt: 3 });
    await w.reply(w.take()[0]!, {});
    expect((await w.job(id)).status).toBe('completed');
  });

  it("keeps the worker's note while the step is suspended, and drops it when the signal sends it again", async () => {
    const w = await world(FLOW);
    const id = await w.start('approval', {});
    await w.reply(w.take()[0]!, { reason: 'waiting for approval by finance' }, { type: 'suspend' });
    expect(stepsOf(await w.job(id)).ask).toMatchObject({
      status: 'suspended',
      suspendNote: 'waiting for approval by finance',
    });
    await w.manager.signal(id, 'ask', { approved: true });
    await w.manager.drain();
    expect(stepsOf(await w.job(id)).ask?.status).toBe('running');
    expect(stepsOf(await w.job(id)).ask?.suspendNote).toBeUndefined();
    // Suspended again without a note: none is shown, not the first one.
    await w.reply(w.take()[0]!, {}, { type: 'suspend', attempt: 2 });
    expect(stepsOf(await w.job(id)).ask?.status).toBe('suspended');
    expect(stepsOf(await w.job(id)).ask?.suspendNote).toBeUndefined();
  });

  it('keeps a signal for a worker step not suspended yet, and sends the step again with it as soon as it suspends', async () => {
    const w = await world(FLOW);
    const id = await w.start('approval', { doc: 7 });
    const [first] = w.take();
    const { kept } = await w.manager.signal(id, 'ask', { approved: true });
    expect(kept).toBe('step "ask" has not been suspended by its worker (yet)');
    await w.reply(first!, {}, { type: 'suspend' });
    const [again] = w.take();
    expect(again).toMatchObject({ step: 'ask', attempt: 2, body: { doc: 7, signal: { approved: true } } });
    expect((await w.job(id)).pendingSignals).toBeUndefined();
  });

  it('refuses a signal for a worker step that already completed', async () => {
    const w = await world(FLOW);
    const id = await w.start('approval', {});
    await w.reply(w.take()[0]!, {});
    await expect(w.manager.signal(id, 'ask', {})).rejects.toThrow(
      new ManagerError('conflict', 'step "ask" is already completed'),
    );
  });

  it('a cancelled job cancels its suspended step', async () => {
    const w = await world(FLOW);
    const id = await w.start('approval', {});
    await w.reply(w.take()[0]!, {}, { type: 'suspend' });
    await w.manager.cancel(id);
    expect(stepsOf(await w.job(id)).ask?.status).toBe('cancelled');
  });
});
