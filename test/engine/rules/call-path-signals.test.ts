import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_SIGNALS, type StepRequest } from '../../../engine/index.js';
import { calledJobId } from '../../../engine/job/calls.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { scaled } from '../../support/soak.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOWS = `workflows:
  - name: order
    steps:
      - name: draft
      - name: publish
        workflow: review
        depends: [ draft ]
      - name: maybe
        workflow: review
        depends: [ draft ]
        when: has(input.twice)
  - name: review
    steps:
      - name: prepare
      - name: approve
        type: signal
        depends: [ prepare ]
        signal: { schema: { type: object, required: [ by ] } }
      - name: deeper
        workflow: inner
        depends: [ approve ]
      - name: fan
        task: each
        depends: [ approve ]
    tasks:
      - name: each
        itemListKey: none
        steps:
          - name: ok
  - name: inner
    steps:
      - name: sign
        type: signal
`;

async function world() {
  const w = new SimulatedWorld();
  await w.register(FLOWS);
  return w;
}

/** Answers every worker request until none is left (fan-out `fan` has no items: it completes at once). */
async function answerAll(w: SimulatedWorld): Promise<void> {
  for (let guard = 0; guard < 20; guard++) {
    const requests = w.take();
    if (!requests.length) return;
    for (const request of requests) await w.reply(request, { from: request.step, none: [] });
  }
}

describe('Rules: a signal through a workflow: step that has not started its called job', () => {
  it('is kept by the job (202) and handed to the called job when the step starts it, then taken by its step', async () => {
    const w = await world();
    const id = await w.start('order', {});
    const { job, kept } = await w.manager.signal(id, 'publish/approve', { by: 'ana' });
    expect(job.id).toBe(id);
    expect(kept).toBe('step "publish" has not started its called job yet');
    expect((await w.job(id)).pendingSignals?.map((signal) => signal.step)).toEqual(['publish/approve']);
    // A second one for the same path is refused while the first is kept.
    expect(await refusal(w.manager.signal(id, 'publish/approve', { by: 'bob' }))).toEqual({
      code: 'conflict',
      message: 'a signal for "publish/approve" is already kept for it (one per path until its step takes it)',
    });

    await w.reply(w.take()[0] as StepRequest, { draft: 1 });
    const called = calledJobId(id, 'publish', 1);
    expect((await w.job(id)).pendingSignals).toBeUndefined();
    expect((await w.job(called)).pendingSignals?.map((signal) => [signal.step, signal.body])).toEqual([
      ['approve', { by: 'ana' }],
    ]);
    await w.reply(w.take().find((request) => request.step === 'prepare') as StepRequest, { prepared: true });
    expect(stepsOf(await w.job(called)).approve).toMatchObject({
      status: 'completed',
      output: { prepared: true, by: 'ana' },
    });
    const history = (await w.job(id)).history?.map((entry) => [entry.kind, entry.step]);
    expect(history).toContainEqual(['signal.kept', 'publish/approve']);
    expect(history).toContainEqual(['signal.delivered', 'publish/approve']);
  });

  it('goes through several calls not started yet (publish/deeper/sign), each handing it on', async () => {
    const w = await world();
    const id = await w.start('order', {});
    expect((await w.manager.signal(id, 'publish/deeper/sign', { yes: true })).kept).toBeDefined();
    await answerAll(w);
    const called = calledJobId(id, 'publish', 1);
    expect((await w.job(called)).pendingSignals?.map((signal) => signal.step)).toEqual(['deeper/sign']);
    await w.manager.signal(called, 'approve', { by: 'ana' });
    await w.manager.drain();
    await answerAll(w);
    const inner = calledJobId(called, 'deeper', 1);
    expect(stepsOf(await w.job(inner)).sign).toMatchObject({ status: 'completed', output: { yes: true } });
    expect((await w.job(id)).status).toBe('completed');
  });

  it('is refused now, changing nothing, when the path can never lead to a step that takes it, or the body misses its schema', async () => {
    const w = await world();
    const id = await w.start('order', {});
    const before = await w.job(id);
    expect(await refusal(w.manager.signal(id, 'publish/nope', {}))).toEqual({
      code: 'invalid',
      message: 'workflow "review" has no step "nope"',
    });
    expect(await refusal(w.manager.signal(id, 'publish/prepare/x', {}))).toEqual({
      code: 'invalid',
      message:
        'step "prepare" of workflow "review" is not a workflow: step: a path goes through workflow: steps and fan-outs only',
    });
    expect(await refusal(w.manager.signal(id, 'publish/fan[0]/ok', {}))).toEqual({
      code: 'conflict',
      message:
        'step "fan" of workflow "review" is a fan-out: its children do not exist before the call that runs it starts',
    });
    expect(await refusal(w.manager.signal(id, 'publish/deeper', {}))).toEqual({
      code: 'invalid',
      message:
        'step "deeper" of workflow "review" is a call step: only a signal step or a worker step takes a signal',
    });
    expect((await refusal(w.manager.signal(id, 'publish/approve', { nobody: 1 }))).message).toMatch(
      /^the signal for step "approve" does not meet its schema: /,
    );
    expect((await w.job(id)).rev).toBe(before.rev);
    expect((await w.job(id)).pendingSignals).toBeUndefined();
  });

  it('is dropped, saying why, when the step ends without starting its job; and refused once the job ended', async () => {
    const w = await world();
    const id = await w.start('order', {});
    await w.manager.signal(id, 'maybe/approve', { by: 'ana' });
    await w.reply(w.take()[0] as StepRequest, {});
    const job = await w.job(id);
    expect(stepsOf(job).maybe?.status).toBe('skipped');
    expect(job.pendingSignals).toBeUndefined();
    expect(job.history?.find((entry) => entry.kind === 'signal.dropped')).toMatchObject({
      step: 'maybe/approve',
      message: 'step "maybe" is skipped: it will not start a called job',
    });
    expect(await refusal(w.manager.signal(id, 'maybe/approve', {}))).toEqual({
      code: 'conflict',
      message: `step "maybe" of job ${id} is skipped: it has no called job`,
    });
  });

  it(`counts in the job's bounds (${MAX_BUFFERED_SIGNALS} kept signals)`, async () => {
    const w = new SimulatedWorld();
    const calls = Array.from(
      { length: MAX_BUFFERED_SIGNALS + 1 },
      (_, n) => `      - { name: c${n}, workflow: inner, depends: [ first ] }\n`,
    ).join('');
    await w.register(
      `workflows:\n  - name: many\n    steps:\n      - name: first\n${calls}  - name: inner\n    steps:\n      - { name: sign, type: signal }\n`,
    );
    const id = await w.start('many', {});
    for (let n = 0; n < MAX_BUFFERED_SIGNALS; n++) await w.manager.signal(id, `c${n}/sign`, {});
    expect((await refusal(w.manager.signal(id, `c${MAX_BUFFERED_SIGNALS}/sign`, {}))).code).toBe('too_large');
  });

  type Moment = 'signal' | 'reply';
  it('property: sent at any moment (before the call starts, before its step waits, while it waits, after, duplicated) it is taken once or refused saying why, never lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Moment>('signal', 'reply'), { maxLength: 10 }),
        async (moments) => {
          const w = await world();
          const id = await w.start('order', {});
          const called = calledJobId(id, 'publish', 1);
          const accepted: number[] = [];
          const outstanding: StepRequest[] = [...w.take()];
          let tag = 0;
          const send = async () => {
            const n = ++tag;
            try {
              await w.manager.signal(id, 'publish/approve', { by: `u${n}` });
              accepted.push(n);
            } catch (error) {
              expect(error).toBeInstanceOf(ManagerError);
              expect((error as ManagerError).code).toBe('conflict');
              // Refused only as a second signal: the first, at whatever moment, is kept or taken.
              expect(accepted.length, (error as Error).message).toBe(1);
            }
            await w.manager.drain();
            outstanding.push(...w.take());
          };
          const replyOne = async () => {
            const request = outstanding.shift();
            if (request) await w.reply(request, { from: request.step, none: [] });
            outstanding.push(...w.take());
          };
          const noneLost = async () => {
            if (!accepted.length) return;
            const parent = await w.job(id);
            const child = await w.job(called).catch(() => undefined);
            const approve = child && stepsOf(child).approve;
            const keptIn = [
              ...(parent.pendingSignals ?? []).filter((s) => s.step === 'publish/approve'),
              ...(child?.pendingSignals ?? []).filter((s) => s.step === 'approve'),
            ];
            // The first accepted signal is kept (once) or was taken by the step.
            if (approve?.status === 'completed') expect(approve.output?.by).toBe(`u${accepted[0]}`);
            else expect(keptIn.map((s) => s.body.by)).toEqual([`u${accepted[0]}`]);
          };
          for (const moment of moments) {
            if (moment === 'signal') await send();
            else await replyOne();
            await noneLost();
          }
          for (let guard = 0; guard < 30 && (await w.job(id)).status === 'running'; guard++) {
            const child = await w.job(called).catch(() => undefined);
            const inner = await w.job(calledJobId(called, 'deeper', 1)).catch(() => undefined);
            if (outstanding.length) await replyOne();
            else if (child && stepsOf(child).approve?.status === 'running') await send();
            else if (inner && stepsOf(inner).sign?.status === 'running') {
              await w.manager.signal(inner.id, 'sign', {});
              await w.manager.drain();
            }
            await noneLost();
          }
          expect((await w.job(id)).status).toBe('completed');
          expect(accepted).toHaveLength(1);
          expect(stepsOf(await w.job(called)).approve?.output?.by).toBe(`u${accepted[0]}`);
        },
      ),
      { numRuns: scaled(60, 1_000, 'SIGNAL_PROPERTY_RUNS') },
    );
  });
});
