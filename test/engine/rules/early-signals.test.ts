import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_BUFFERED_SIGNAL_BYTES,
  MAX_BUFFERED_SIGNALS,
  type StepRequest,
  signalFate,
} from '../../../engine/index.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { scaled } from '../../support/soak.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOW = `workflows:
  - name: webhook
    steps:
      - name: send
      - name: approve
        type: signal
        depends: [ send ]
      - name: ask
        depends: [ send ]
      - name: publish
        depends: [ approve, ask ]
`;

async function world(yaml = FLOW) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

describe('Rules: a signal that comes before its step waits', () => {
  it('is kept for a signal step not ready yet, shown with the job, and completes the step when it is ready', async () => {
    const w = await world();
    const id = await w.start('webhook', { doc: 1 });
    const outcome = await w.manager.signal(id, 'approve', { decision: 'yes' });
    expect(outcome.kept).toBe('step "approve" is not ready yet');
    expect((await w.job(id)).pendingSignals).toEqual([
      { step: 'approve', body: { decision: 'yes' }, at: w.now, bytes: 18 },
    ]);
    await w.reply(w.take()[0]!, { doc: 1, sent: true });
    const job = await w.job(id);
    expect(stepsOf(job).approve).toMatchObject({
      status: 'completed',
      output: { doc: 1, sent: true, decision: 'yes' },
    });
    expect(job.pendingSignals).toBeUndefined();
    expect(w.take().map((request) => request.step)).toEqual(['ask']);
  });

  it('is kept for a worker step whose worker has not suspended yet, and sends it again with the signal at its suspend', async () => {
    const w = await world();
    const id = await w.start('webhook', { doc: 1 });
    await w.reply(w.take()[0]!, { doc: 1 });
    const [ask] = w.take();
    expect((await w.manager.signal(id, 'ask', { ok: true })).kept).toBe(
      'step "ask" has not been suspended by its worker (yet)',
    );
    await w.reply(ask!, { reason: 'waiting for the partner' }, { type: 'suspend' });
    const [again] = w.take();
    expect(again).toMatchObject({ step: 'ask', attempt: 2, body: { doc: 1, signal: { ok: true } } });
    expect((await w.job(id)).pendingSignals).toBeUndefined();
  });

  it('is dropped when its worker step completes without suspending, and the job goes on', async () => {
    const w = await world();
    const id = await w.start('webhook', {});
    await w.reply(w.take()[0]!, {});
    const [ask] = w.take();
    await w.manager.signal(id, 'ask', { ok: true });
    await w.reply(ask!, { done: true });
    expect((await w.job(id)).pendingSignals).toBeUndefined();
    await w.manager.signal(id, 'approve', {});
    await w.manager.drain();
    await w.reply(w.take()[0]!, {});
    expect((await w.job(id)).status).toBe('completed');
  });

  it('keeps one signal per step: a second one is refused while the first is kept (409)', async () => {
    const w = await world();
    const id = await w.start('webhook', {});
    await w.manager.signal(id, 'approve', { n: 1 });
    expect(await refusal(w.manager.signal(id, 'approve', { n: 2 }))).toEqual({
      code: 'conflict',
      message: 'a signal for step "approve" is already kept for it (one per step until the step takes it)',
    });
    await w.reply(w.take()[0]!, {});
    expect(stepsOf(await w.job(id)).approve?.output).toEqual({ n: 1 });
  });

  it('is refused (409) for a step that already ended or a job that ended, naming why; 400 for a step that takes none', async () => {
    const w = await world(`${FLOW}      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`);
    const id = await w.start('webhook', { items: [] });
    expect(await refusal(w.manager.signal(id, 'each', {}))).toEqual({
      code: 'invalid',
      message: 'step "each" is a fanout step: only a signal step or a worker step takes a signal',
    });
    expect((await refusal(w.manager.signal(id, 'nope', {}))).code).toBe('invalid');
    await w.reply(w.take()[0]!, {});
    expect(await refusal(w.manager.signal(id, 'send', {}))).toEqual({
      code: 'conflict',
      message: 'step "send" is already completed',
    });
    await w.manager.cancel(id);
    expect(await refusal(w.manager.signal(id, 'approve', {}))).toEqual({
      code: 'conflict',
      message: 'the job is cancelled',
    });
  });

  it('is dropped when the job ends before its step waits', async () => {
    const w = await world();
    const id = await w.start('webhook', {});
    await w.manager.signal(id, 'approve', {});
    await w.reply(w.take()[0]!, { error: 'down' }, { type: 'error', retryable: false });
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.pendingSignals).toBeUndefined();
  });

  it('is kept by a paused job and taken at resume, when the step becomes ready', async () => {
    const w = await world();
    const id = await w.start('webhook', {});
    await w.manager.pause(id);
    await w.manager.signal(id, 'approve', { by: 'ana' });
    await w.reply(w.take()[0]!, {});
    expect(stepsOf(await w.job(id)).approve?.status).toBe('waiting');
    await w.manager.resume(id);
    await w.manager.drain();
    expect(stepsOf(await w.job(id)).approve).toMatchObject({ status: 'completed', output: { by: 'ana' } });
  });

  it(`keeps at most ${MAX_BUFFERED_SIGNALS} signals and ${MAX_BUFFERED_SIGNAL_BYTES} bytes of them per job (413 beyond), changing nothing`, async () => {
    const names = Array.from({ length: MAX_BUFFERED_SIGNALS + 1 }, (_, n) => `s${n}`);
    const w = await world(`workflows:
  - name: many
    steps:
      - name: first
${names.map((name) => `      - name: ${name}\n        type: signal\n        depends: [ first ]\n`).join('')}`);
    const id = await w.start('many', {});
    for (const name of names.slice(0, -1)) await w.manager.signal(id, name, {});
    const before = await w.job(id);
    expect(await refusal(w.manager.signal(id, names.at(-1)!, {}))).toEqual({
      code: 'too_large',
      message: `the job already keeps ${MAX_BUFFERED_SIGNALS} signals for steps that do not wait yet; it keeps at most ${MAX_BUFFERED_SIGNALS}`,
    });
    expect((await w.job(id)).rev).toBe(before.rev);

    const big = await world(FLOW);
    const bigId = await big.start('webhook', {});
    const { code, message } = await refusal(
      big.manager.signal(bigId, 'approve', { text: 'x'.repeat(MAX_BUFFERED_SIGNAL_BYTES) }),
    );
    expect(code).toBe('too_large');
    expect(message).toContain(`the limit of ${MAX_BUFFERED_SIGNAL_BYTES} bytes`);
    expect((await big.job(bigId)).pendingSignals).toBeUndefined();
  });
});

describe('Rule: signalFate', () => {
  const state = (status: 'waiting' | 'running' | 'suspended' | 'completed' | 'skipped' | 'failed') => ({
    name: 's',
    status,
    attempts: 1,
    firstAttempt: 1,
  });

  it('takes, keeps or refuses by the step kind, its state and the job', () => {
    const fate = (
      kind: 'signal' | 'worker',
      status: Parameters<typeof state>[0],
      jobStatus = 'running' as const,
    ) => signalFate({ step: 's', kind, state: state(status), jobStatus }).kind;
    expect(fate('signal', 'running')).toBe('take');
    expect(fate('signal', 'waiting')).toBe('buffer');
    expect(fate('worker', 'suspended')).toBe('take');
    expect(fate('worker', 'running')).toBe('buffer');
    expect(fate('worker', 'waiting')).toBe('buffer');
    for (const status of ['completed', 'skipped', 'failed'] as const) {
      expect(fate('signal', status)).toBe('refuse');
      expect(fate('worker', status)).toBe('refuse');
    }
    expect(signalFate({ step: 's', kind: 'signal', state: state('waiting'), jobStatus: 'queued' }).kind).toBe(
      'buffer',
    );
    expect(signalFate({ step: 's', kind: 'signal', state: state('running'), jobStatus: 'paused' }).kind).toBe(
      'take',
    );
    expect(
      signalFate({ step: 's', kind: 'signal', state: state('running'), jobStatus: 'completed' }),
    ).toEqual({ kind: 'refuse', code: 'conflict', reason: 'the job is completed' });
    expect(signalFate({ step: 's', kind: 'call', state: state('running'), jobStatus: 'running' }).kind).toBe(
      'refuse',
    );
  });
});

/**
 * Property: signals sent at any moment relative to their step (before it is ready, while it runs,
 * after it ended, several times) are each taken exactly once, kept, or refused with a reason; a kept
 * one is never lost while the job runs, and the job completes with the first accepted signal.
 */
describe('Property: a signal sent at any moment is taken exactly once or refused with a reason', () => {
  type Action = { kind: 'signal'; step: 'approve' | 'ask' } | { kind: 'reply' };
  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.constant<Action>({ kind: 'reply' }),
    fc.constantFrom<Action>({ kind: 'signal', step: 'approve' }, { kind: 'signal', step: 'ask' }),
  );

  it('holds for every interleaving of signals and replies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { maxLength: 14 }), async (actions) => {
        const w = await world();
        const id = await w.start('webhook', {});
        const outstanding: StepRequest[] = [...w.take()];
        let tag = 0;
        /** By step: the tags of the signals accepted (taken or kept). */
        const accepted: Record<'approve' | 'ask', number[]> = { approve: [], ask: [] };

        const send = async (step: 'approve' | 'ask') => {
          const n = ++tag;
          try {
            await w.manager.signal(id, step, { tag: n });
            accepted[step].push(n);
          } catch (error) {
            expect(error).toBeInstanceOf(ManagerError);
            expect(['conflict']).toContain((error as ManagerError).code);
            expect((error as ManagerError).message.length).toBeGreaterThan(10);
          }
          await w.manager.drain();
          outstanding.push(...w.take());
        };
        const reply = async () => {
          const request = outstanding.shift();
          if (!request) return;
          // The ask worker suspends until it is sent a signal, then succeeds with it.
          if (request.step === 'ask' && request.body.signal === undefined) {
            await w.reply(request, {}, { type: 'suspend', attempt: request.attempt });
          } else await w.reply(request, { from: request.step }, { attempt: request.attempt });
          outstanding.push(...w.take());
        };
        const noneLost = async () => {
          const job = await w.job(id);
          if (job.status !== 'running') return;
          const steps = stepsOf(job);
          const kept = new Map((job.pendingSignals ?? []).map((signal) => [signal.step, signal.body.tag]));
          // An accepted signal the signal step has not taken is kept.
          if (accepted.approve.length && steps.approve?.status !== 'completed')
            expect(kept.get('approve')).toBe(accepted.approve[0]);
          // The ask step waits only while no signal for it is kept.
          if (steps.ask?.status === 'suspended') expect(kept.has('ask')).toBe(false);
        };

        for (const next of actions) {
          if (next.kind === 'signal') await send(next.step);
          else await reply();
          await noneLost();
        }
        // Then drive the job to its end: answer every request, signal what still waits.
        for (let guard = 0; guard < 20 && (await w.job(id)).status === 'running'; guard++) {
          const steps = stepsOf(await w.job(id));
          if (outstanding.length) await reply();
          else if (steps.approve?.status === 'running') await send('approve');
          else if (steps.ask?.status === 'suspended') await send('ask');
          await noneLost();
        }
        const job = await w.job(id);
        expect(job.status).toBe('completed');
        expect(job.pendingSignals).toBeUndefined();
        const steps = stepsOf(job);
        // The signal step took the first signal accepted for it, and only that one.
        expect(accepted.approve.length).toBe(1);
        expect(steps.approve?.output?.tag).toBe(accepted.approve[0]);
        // The ask step was sent again with the first signal accepted for it (then completed).
        const askRequests = w.sent.filter((request) => request.step === 'ask' && request.body.signal);
        expect(askRequests.map((request) => (request.body.signal as { tag: number }).tag)).toEqual([
          accepted.ask[0],
        ]);
      }),
      { numRuns: scaled(60, 2_000, 'SIGNAL_PROPERTY_RUNS') },
    );
  });
});
