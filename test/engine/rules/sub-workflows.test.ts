import { describe, expect, it } from 'vitest';
import { calledJobId } from '../../../engine/job/calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOWS = `workflows:
  - name: order
    steps:
      - name: load
      - name: pay
        depends: [ load ]
        workflow: payment
        retries: 1
      - name: ship
        depends: [ pay ]
  - name: payment
    steps:
      - name: charge
      - name: receipt
        depends: [ charge ]
`;

async function world(yaml = FLOWS) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

describe('Rules: sub-workflows (workflow:)', () => {
  it("runs a job of the called workflow with the step's input and completes the step with its result", async () => {
    const w = await world();
    const id = await w.start('order', { orderId: 'o-1' });
    await w.reply(w.take()[0]!, { orderId: 'o-1', total: 9 });
    const [charge] = w.take();
    const childId = calledJobId(id, 'pay', 1);
    expect(charge).toMatchObject({ step: 'charge', jobId: childId, body: { orderId: 'o-1', total: 9 } });
    const child = await w.job(childId);
    expect(child.workflow).toBe('payment');
    expect(child.calledBy).toEqual({ id, step: 'pay', attempt: 1, chain: ['order'] });
    expect(stepsOf(await w.job(id)).pay).toMatchObject({ status: 'running', job: childId });
    await w.reply(charge!, { charged: true });
    await w.reply(w.take()[0]!, { receipt: 'r-1' });
    const [ship] = w.take();
    expect(ship?.step).toBe('ship');
    expect(ship?.body).toEqual({ receipt: 'r-1' });
    await w.reply(ship!, { shipped: true });
    expect((await w.job(id)).status).toBe('completed');
  });

  it('retries a failed call with a new child job, then fails the step with the child error', async () => {
    const w = await world();
    const id = await w.start('order', {});
    await w.reply(w.take()[0]!, {});
    await w.reply(w.take()[0]!, { error: 'card declined' }, { type: 'error' });
    const [second] = w.take();
    expect(second?.jobId).toBe(calledJobId(id, 'pay', 2));
    await w.reply(second!, { error: 'declined again' }, { type: 'error' });
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain(
      `the called job ${calledJobId(id, 'pay', 2)} failed: declined again`,
    );
  });

  it('cancelling the caller cancels the called job', async () => {
    const w = await world();
    const id = await w.start('order', {});
    await w.reply(w.take()[0]!, {});
    w.take();
    await w.manager.cancel(id);
    await w.manager.drain();
    expect((await w.job(calledJobId(id, 'pay', 1))).status).toBe('cancelled');
  });

  it('fails the step when the called workflow is not registered', async () => {
    const w = await world(`workflows:
  - name: lonely
    steps:
      - name: call
        workflow: nowhere
`);
    const id = await w.start('lonely', {});
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain('no workflow named "nowhere"');
  });

  it('stops a call cycle across two workflows at a depth of 16, spelling the chain out', async () => {
    const w = await world(`workflows:
  - name: ping
    steps:
      - name: call-pong
        workflow: pong
  - name: pong
    steps:
      - name: call-ping
        workflow: ping
`);
    const id = await w.start('ping', {});
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain('calls nest deeper than 16 workflows: ping -> pong -> ping');
  });

  it('a timed out call cancels its job and starts a new one', async () => {
    const w = await world(
      FLOWS.replace('        retries: 1\n', '        retries: 1\n        timeout: 10s\n'),
    );
    const id = await w.start('order', {});
    await w.reply(w.take()[0]!, {});
    w.take();
    await w.advance(10_000);
    expect((await w.job(calledJobId(id, 'pay', 1))).status).toBe('cancelled');
    expect(w.take().map((request) => request.jobId)).toEqual([calledJobId(id, 'pay', 2)]);
  });
});

describe('Rules: pause and resume reach a called job', () => {
  it('pauses the called job with its caller, holds its steps, and resumes both', async () => {
    const w = await world();
    const id = await w.start('order', {});
    await w.reply(w.take()[0]!, {});
    const [charge] = w.take();
    const childId = calledJobId(id, 'pay', 1);
    await w.manager.pause(id);
    await w.manager.drain();
    expect((await w.job(childId)).status).toBe('paused');
    await w.reply(charge!, { charged: true });
    expect(w.take()).toEqual([]);
    await w.manager.resume(id);
    await w.manager.drain();
    expect((await w.job(childId)).status).toBe('running');
    const [receipt] = w.take();
    expect(receipt?.step).toBe('receipt');
    await w.reply(receipt!, { receipt: 'r' });
    await w.reply(w.take()[0]!, {});
    expect((await w.job(id)).status).toBe('completed');
  });
});
