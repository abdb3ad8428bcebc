import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/index.js';
import { calledJobId } from '../../../engine/job/calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { scaled } from '../../support/soak.js';
import { stepsOf } from '../../support/steps-of.js';

const POLL = (repeat: string, extra = '') => `workflows:
  - name: poll
    steps:
      - name: check
        repeat: ${repeat}
${extra}      - name: after
        depends: [ check ]
`;

describe('Rules: loops (repeat:)', () => {
  it('runs the step again until its condition holds on the output, each iteration kept in the history', async () => {
    const w = new SimulatedWorld();
    await w.register(POLL('{ until: \'output.status == "done"\', max: 5, delay: 30s }'));
    const id = await w.start('poll', { order: 7 });
    for (const status of ['pending', 'pending']) {
      const [request] = w.take();
      expect(request).toMatchObject({ step: 'check', body: { order: 7 } });
      await w.reply(request as never, { status });
      expect(w.take()).toEqual([]);
      await w.advance(30_000);
    }
    const [third] = w.take();
    expect(third?.attempt).toBe(3);
    await w.reply(third as never, { status: 'done' });
    const [after] = w.take();
    expect(after).toMatchObject({ step: 'after', body: { status: 'done' } });
    const check = stepsOf(await w.job(id)).check;
    expect(check).toMatchObject({ status: 'completed', iterations: 3, output: { status: 'done' } });
    expect(check?.pastAttempts?.map((record) => [record.outcome, record.output])).toEqual([
      ['repeated', { status: 'pending' }],
      ['repeated', { status: 'pending' }],
    ]);
  });

  it('fails the step when max iterations ran without the condition holding', async () => {
    const w = new SimulatedWorld();
    await w.register(POLL("{ until: 'output.ready', max: 2 }"));
    const id = await w.start('poll', {});
    await w.reply(w.take()[0] as never, { ready: false });
    await w.reply(w.take()[0] as never, { ready: false });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toBe(
      '"repeat.until" (output.ready) did not hold after 2 iterations (its "max")',
    );
  });

  it('retrying a job whose loop ran out runs the loop anew, with its whole max', async () => {
    const w = new SimulatedWorld();
    await w.register(POLL("{ until: 'output.ready', max: 2 }"));
    const id = await w.start('poll', {});
    await w.reply(w.take()[0] as never, { ready: false });
    await w.reply(w.take()[0] as never, { ready: false });
    expect((await w.job(id)).status).toBe('failed');
    await w.manager.retry(id);
    await w.manager.drain();
    await w.reply(w.take()[0] as never, { ready: false });
    const [again] = w.take();
    expect(again?.step).toBe('check');
    await w.reply(again as never, { ready: true });
    expect(stepsOf(await w.job(id)).check).toMatchObject({ status: 'completed', iterations: 2 });
  });

  it('takes one reply per iteration: a re-sent reply of an earlier iteration, during the delay or the next iteration, is ignored', async () => {
    const w = new SimulatedWorld();
    await w.register(POLL("{ until: 'output.polls >= 3', max: 5, delay: 1s }"));
    const id = await w.start('poll', {});
    const [first] = w.take();
    const answer = (request: typeof first, polls: number) =>
      w.reply(request as never, { polls }, { attempt: request?.attempt });
    await answer(first, 1);
    // The same reply again (a worker's reply is at-least-once), while the loop waits out its delay.
    await answer(first, 1);
    expect(stepsOf(await w.job(id)).check).toMatchObject({ status: 'running', iterations: 1, attempts: 1 });
    await w.advance(1_000);
    const [second] = w.take();
    expect(second?.attempt).toBe(2);
    // And once more while the second iteration runs: it is not the second iteration's answer.
    await answer(first, 1);
    expect(stepsOf(await w.job(id)).check).toMatchObject({ status: 'running', iterations: 1, attempts: 2 });
    await answer(second, 2);
    await w.advance(1_000);
    const [third] = w.take();
    await answer(third, 3);
    expect(stepsOf(await w.job(id)).check).toMatchObject({
      status: 'completed',
      iterations: 3,
      attempts: 3,
      output: { polls: 3 },
    });
  });

  it('retries count per iteration', async () => {
    const w = new SimulatedWorld();
    await w.register(POLL("{ until: 'output.ready', max: 3 }", '        retries: 1\n'));
    const id = await w.start('poll', {});
    await w.reply(w.take()[0] as never, { error: 'flaky' }, { type: 'error' });
    await w.reply(w.take()[0] as never, { ready: false });
    await w.reply(w.take()[0] as never, { error: 'flaky' }, { type: 'error' });
    await w.reply(w.take()[0] as never, { ready: true });
    expect(w.take().map((request) => request.step)).toEqual(['after']);
    expect(stepsOf(await w.job(id)).check?.iterations).toBe(2);
  });

  it('validation: until and max are required, max is capped, and it applies to worker and workflow steps', () => {
    const errors = (step: string) =>
      loadWorkflows(`workflows:\n  - name: f\n    steps:\n      - name: a\n${step}`).errors.map(
        (e) => e.message,
      );
    expect(errors("        repeat: { until: 'output.x' }\n")[0]).toMatch(/"repeat" needs "max"/);
    expect(errors("        repeat: { until: 'output.x', max: 5000 }\n")[0]).toMatch(
      /"repeat.max" must be a whole number from 1 to 1000/,
    );
    expect(errors('        repeat: { max: 3 }\n')[0]).toMatch(/"repeat" needs "until"/);
    expect(errors("        repeat: { until: 'output.x', max: 3, every: 1s }\n")[0]).toMatch(
      /unknown repeat key "every"/,
    );
    expect(errors("        type: signal\n        repeat: { until: 'output.x', max: 3 }\n")[0]).toMatch(
      /"repeat" applies to a step a worker or a called workflow does/,
    );
    expect(errors("        repeat: { until: 'output.x', max: 3, delay: 1s }\n")).toEqual([]);
  });

  it("repeats a workflow: step: each iteration a new called job, until the called job's result meets the condition", async () => {
    const w = new SimulatedWorld();
    await w.register(`workflows:
  - name: sync
    steps:
      - name: round
        workflow: export
        repeat: { until: 'output.left == 0', max: 4 }
      - name: after
        depends: [ round ]
  - name: export
    steps:
      - name: page
`);
    const id = await w.start('sync', { left: 2 });
    for (const [attempt, left] of [
      [1, 1],
      [2, 0],
    ] as const) {
      const [page] = w.take();
      expect(page).toMatchObject({ step: 'page', jobId: calledJobId(id, 'round', attempt) });
      await w.reply(page as never, { left });
      await w.manager.drain();
    }
    const [after] = w.take();
    expect(after).toMatchObject({ step: 'after', jobId: id, body: { left: 0 } });
    const round = stepsOf(await w.job(id)).round;
    expect(round).toMatchObject({ status: 'completed', iterations: 2, job: calledJobId(id, 'round', 2) });
    expect(round?.pastAttempts?.map((record) => [record.outcome, record.output])).toEqual([
      ['repeated', { left: 1 }],
    ]);
    expect((await w.job(calledJobId(id, 'round', 1))).status).toBe('completed');
  });

  it("repeats a step of a fan-out's task in each child; a fan-out step itself is refused, saying why", async () => {
    const w = new SimulatedWorld();
    await w.register(`workflows:
  - name: batch
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: poll
            repeat: { until: 'output.ready', max: 3 }
`);
    const id = await w.start('batch', { items: [1, 2] });
    await w.manager.drain();
    for (const ready of [false, true]) {
      const requests = w.take();
      expect(requests.map((request) => request.step)).toEqual(['poll', 'poll']);
      for (const request of requests) await w.reply(request, { ready });
      await w.manager.drain();
    }
    expect((await w.job(id)).status).toBe('completed');
    const refused = loadWorkflows(`workflows:
  - name: batch
    steps:
      - name: each
        task: per-item
        repeat: { until: 'output.done', max: 3 }
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: poll
`).errors.map((error) => error.message);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(
      /"repeat" does not apply to a fan-out \(task:\): its children keep one id per element/,
    );
    expect(refused[0]).toMatch(/repeat a workflow: step that calls it/);
  });

  it('property: a loop never runs more than max iterations, and stops at the first output that meets its condition', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        async (max, readiness) => {
          const w = new SimulatedWorld();
          await w.register(POLL(`{ until: 'output.ready', max: ${max}, delay: 1s }`));
          const id = await w.start('poll', {});
          let sent = 0;
          // Replies to each iteration as `readiness` says, moving the clock while a delay runs.
          for (let rounds = 0; rounds < 100; rounds++) {
            const requests = w.take().filter((request) => request.step === 'check');
            for (const request of requests) {
              await w.reply(request, { ready: readiness[sent % readiness.length] as boolean });
              sent++;
            }
            if (requests.length) continue;
            if (w.timers.size === 0) break;
            await w.advance(1_000);
          }
          const firstReady = readiness.findIndex((ready) => ready);
          const expected = firstReady >= 0 && firstReady < max ? firstReady + 1 : max;
          expect(sent).toBeLessThanOrEqual(max);
          expect(sent).toBe(Math.min(expected, max));
          const job = await w.job(id);
          expect(job.status).toBe(firstReady >= 0 && firstReady < max ? 'running' : 'failed');
        },
      ),
      { numRuns: scaled(40, 500, 'REPEAT_PROPERTY_RUNS') },
    );
  });
});
