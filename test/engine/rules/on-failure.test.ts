import { describe, expect, it } from 'vitest';
import { onFailureJobId } from '../../../engine/job/on-failure.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const FLOWS = `workflows:
  - name: charge
    onFailure: notify
    timeout: 1m
    steps:
      - name: charge-card
  - name: notify
    steps:
      - name: send-mail
`;

async function failedCharge() {
  const w = new SimulatedWorld();
  await w.register(FLOWS);
  const id = await w.start('charge', { amount: 7 });
  const [request] = w.take();
  await w.reply(request!, { error: 'card declined' }, { type: 'error' });
  return { w, id };
}

describe('Rules: onFailure', () => {
  it('starts one job of the onFailure workflow with the failed job and its error, linked both ways', async () => {
    const { w, id } = await failedCharge();
    const failed = await w.job(id);
    expect(failed.status).toBe('failed');
    const followUp = onFailureJobId(id, 1);
    expect(failed.followUp).toBe(followUp);
    const handler = await w.job(followUp);
    expect(handler.workflow).toBe('notify');
    expect(handler.causedBy).toBe(id);
    expect(handler.input).toEqual({
      job: { id, workflow: 'charge', version: 1, input: { amount: 7 } },
      error: { step: 'charge-card', attempt: 1, message: 'card declined', at: w.now },
    });
    expect(w.take().map((request) => [request.step, request.jobId])).toEqual([['send-mail', followUp]]);
  });

  it('starts it once when the follow-up is carried out twice, and once more for a second failure', async () => {
    const { w, id } = await failedCharge();
    w.take();
    await w.manager.recover();
    await w.manager.drain();
    expect(w.take()).toEqual([]);
    await w.manager.retry(id);
    await w.manager.drain();
    await w.reply(w.take()[0]!, { error: 'declined again' }, { type: 'error', attempt: 2 });
    const failed = await w.job(id);
    expect(failed.followUp).toBe(onFailureJobId(id, 2));
    expect((await w.job(onFailureJobId(id, 2))).input.error).toMatchObject({ message: 'declined again' });
    expect(w.take().map((request) => request.jobId)).toEqual([onFailureJobId(id, 2)]);
  });

  it('starts it when the job times out', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOWS);
    const id = await w.start('charge', {});
    await w.advance(60_000);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect((await w.job(job.followUp!)).input.error).toMatchObject({ step: null });
  });

  it('does not start one for a cancelled job, nor for a completed one', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOWS);
    const cancelled = await w.start('charge', {});
    await w.manager.cancel(cancelled);
    const completed = await w.start('charge', {});
    const requests = w.take();
    await w.reply(requests.find((request) => request.jobId === completed)!, {});
    expect((await w.job(cancelled)).followUp).toBeUndefined();
    expect((await w.job(completed)).followUp).toBeUndefined();
    expect(w.take()).toEqual([]);
  });

  it('logs, and leaves the failed job as it is, when the onFailure workflow is not registered', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOWS.split('  - name: notify')[0] as string);
    const id = await w.start('charge', {});
    await w.reply(w.take()[0]!, { error: 'x' }, { type: 'error' });
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    await expect(w.store.getJob(job.followUp!)).resolves.toBeUndefined();
  });
});
