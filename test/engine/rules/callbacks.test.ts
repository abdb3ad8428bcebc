import { describe, expect, it } from 'vitest';
import type { StepRequest } from '../../../engine/index.js';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOW = `workflows:
  - name: partner
    steps:
      - name: call
        timeout: 30s
        retries: 1
      - name: after
        depends: [ call ]
`;

async function world() {
  const w = new SimulatedWorld();
  await w.register(FLOW);
  await w.manager.tokens.ready();
  return w;
}

/** The token the request was sent with (the bus adds it; here minted as the outbox pump does). */
const tokenOf = (w: SimulatedWorld, request: StepRequest) =>
  w.manager.tokens.mint(request.correlationId, request.attempt);

describe("Rules: a callback answers its attempt by the attempt's token, as the worker's reply would", () => {
  it('success completes the step with its output, and the job goes on', async () => {
    const w = await world();
    const id = await w.start('partner', { order: 1 });
    const [call] = w.take();
    const job = await w.manager.callback(tokenOf(w, call!), { type: 'success', output: { paid: true } });
    await w.manager.drain();
    expect(stepsOf(job).call).toMatchObject({ status: 'completed', output: { paid: true } });
    expect(w.take().map((request) => [request.step, request.body])).toEqual([['after', { paid: true }]]);
    expect((await w.job(id)).status).toBe('running');
  });

  it("failure fails the attempt (retried by the step's retries); a callback of the failed attempt is refused (409)", async () => {
    const w = await world();
    await w.start('partner', {});
    const [first] = w.take();
    await w.manager.callback(tokenOf(w, first!), { type: 'failure', error: 'partner down' });
    await w.manager.drain();
    await w.advance(5_000);
    const [second] = w.take();
    expect(second).toMatchObject({ step: 'call', attempt: 2 });
    expect(await refusal(w.manager.callback(tokenOf(w, first!), { type: 'success' }))).toEqual({
      code: 'conflict',
      message: `attempt 1 of ${first!.correlationId} does not take this callback: attempt 1 is not the current attempt (2)`,
    });
    const job = await w.manager.callback(tokenOf(w, second!), { type: 'success', output: { ok: 2 } });
    expect(stepsOf(job).call?.output).toEqual({ ok: 2 });
  });

  it('heartbeat moves the deadline on; suspend waits for a signal, which sends the step again', async () => {
    const w = await world();
    const id = await w.start('partner', {});
    const [call] = w.take();
    await w.advance(20_000);
    await w.manager.callback(tokenOf(w, call!), { type: 'heartbeat' });
    await w.advance(20_000);
    expect(stepsOf(await w.job(id)).call).toMatchObject({ status: 'running', attempts: 1 });
    await w.manager.callback(tokenOf(w, call!), { type: 'suspend', note: 'waiting for the bank' });
    expect(stepsOf(await w.job(id)).call).toMatchObject({
      status: 'suspended',
      suspendNote: 'waiting for the bank',
    });
    await w.manager.signal(id, 'call', { approved: true });
    await w.manager.drain();
    expect(w.take()).toMatchObject([{ step: 'call', attempt: 2, body: { signal: { approved: true } } }]);
  });

  it('is refused once the attempt ended (409), and for a token no manager made (404)', async () => {
    const w = await world();
    await w.start('partner', {});
    const [call] = w.take();
    await w.reply(call!, { by: 'worker' });
    const ended = await refusal(w.manager.callback(tokenOf(w, call!), { type: 'success' }));
    expect(ended.code).toBe('conflict');
    expect(ended.message).toContain('the step already completed');
    const forged = `${tokenOf(w, call!).slice(0, -4)}AAAA`;
    expect(await refusal(w.manager.callback(forged, { type: 'success' }))).toEqual({
      code: 'not_found',
      message: 'no attempt has this callback token',
    });
  });

  it('a callback that comes before the manager has acknowledged the request as sent is taken', async () => {
    const w = await world();
    // The partner answers from inside the send: the outbox entry is not acknowledged yet.
    const send = w.bus.send.bind(w.bus);
    let answered: Promise<unknown> | undefined;
    w.bus.send = async (requests) => {
      await send(requests);
      for (const request of requests)
        if (request.step === 'call') answered = w.manager.callback(tokenOf(w, request), { type: 'success' });
    };
    const id = await w.start('partner', {});
    await answered;
    await w.manager.drain();
    expect(stepsOf(await w.job(id)).call?.status).toBe('completed');
  });
});
