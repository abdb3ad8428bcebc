import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InboundReply, JobRecord, StepRequest } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

/** A random DAG of up to 7 steps, each with a condition on one flag of the job's input. */
interface Shape {
  steps: { depends: number[]; conditioned: boolean; call: boolean; fails: boolean; handled: boolean }[];
  flags: boolean[];
}

const shapeArbitrary: fc.Arbitrary<Shape> = fc.record({
  steps: fc
    .array(
      fc.record({
        dependsBits: fc.nat(),
        conditioned: fc.boolean(),
        call: fc.boolean(),
        fails: fc.boolean(),
        handled: fc.boolean(),
      }),
      { minLength: 1, maxLength: 7 },
    )
    .map((raw) =>
      raw.map((step, index) => ({
        depends: Array.from({ length: index }, (_, d) => d).filter((d) => (step.dependsBits >> d) & 1),
        conditioned: step.conditioned,
        call: step.call,
        // A failing step is a worker step; most of them are handled, so that the job goes on.
        fails: step.fails && !step.call && index % 3 === 2,
        handled: step.handled || index % 2 === 0,
      })),
    ),
  flags: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
});

function toYaml(shape: Shape): string {
  const steps = shape.steps.map((step, index) => {
    const lines = [`      - name: s${index}`];
    if (step.depends.length)
      lines.push(`        depends: [ ${step.depends.map((d) => `s${d}`).join(', ')} ]`);
    if (step.conditioned) lines.push(`        when: job.input.f${index} == true`);
    if (step.call) lines.push('        workflow: callee');
    if (step.handled) lines.push('        continueOnError: true');
    return lines.join('\n');
  });
  return `workflows:
  - name: random
    onFailure: handler
    steps:
${steps.join('\n')}
  - name: callee
    steps:
      - name: inner
  - name: handler
    steps:
      - name: report
`;
}

/** What the rules say each step ends as, computed from the shape alone. */
function expectedStatuses(shape: Shape): string[] {
  const statuses: string[] = [];
  let jobFailed = false;
  const statusOf = (step: Shape['steps'][number], index: number): string => {
    const deps = step.depends.map((d) => statuses[d]);
    if (jobFailed || deps.some((status) => status === 'waiting' || status === 'failed!')) return 'waiting';
    if (deps.length && deps.every((status) => status === 'skipped')) return 'skipped';
    if (step.conditioned && !shape.flags[index]) return 'skipped';
    if (!step.fails) return 'completed';
    if (step.handled) return 'failed';
    jobFailed = true;
    return 'failed!';
  };
  for (const [index, step] of shape.steps.entries()) statuses.push(statusOf(step, index));
  return statuses;
}

/** Shapes whose failures are all handled: every decision is the rules', not the replies' order. */
const handledOnly = shapeArbitrary.map((shape) => ({
  ...shape,
  steps: shape.steps.map((step) => ({ ...step, handled: step.handled || step.fails })),
}));

interface Delivery {
  order: number[];
  duplicates: boolean[];
}

const deliveryArbitrary: fc.Arbitrary<Delivery> = fc.record({
  order: fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
  duplicates: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
});

function replyTo(request: StepRequest, shape: Shape): InboundReply {
  const index = Number(request.step.slice(1));
  const fails = request.step.startsWith('s') && shape.steps[index]?.fails === true;
  return fails
    ? { correlationId: request.correlationId, body: '{"error":"no"}', type: 'error', retryable: false }
    : { correlationId: request.correlationId, body: JSON.stringify({ [request.step]: true }) };
}

async function run(shape: Shape, delivery: Delivery) {
  const store = new MemoryStore();
  const world = new SimulatedWorld(store);
  await world.register(toYaml(shape));
  const input = Object.fromEntries(shape.flags.map((flag, index) => [`f${index}`, flag]));
  const id = await world.start('random', input, '00000000-0000-4000-8000-000000000001');
  const pool: StepRequest[] = [];
  const sent: StepRequest[] = [];
  const take = () => {
    for (const request of world.take()) {
      sent.push(request);
      pool.push(request);
    }
  };
  take();
  let turn = 0;
  const again = new Set<string>();
  while (pool.length) {
    const [request] = pool.splice((delivery.order[turn % 40] ?? 0) % pool.length, 1) as [StepRequest];
    if (delivery.duplicates[turn % 40] && !again.has(request.correlationId)) {
      again.add(request.correlationId);
      pool.push(request);
    }
    turn++;
    await world.deliver([replyTo(request, shape)]);
    take();
  }
  const jobs = (await store.queryJobs({ limit: 1000 })).jobs as JobRecord[];
  return { job: await world.job(id), sent, jobs };
}

describe('Property: conditions, handled errors, sub-workflows and onFailure under reordered and duplicated replies', () => {
  it('skips exactly the steps the rules say, never dispatches a skipped step, and starts each call and handler job once', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, deliveryArbitrary, async (shape, delivery) => {
        const { job, sent, jobs } = await run(shape, delivery);
        const expected = expectedStatuses(shape);
        const steps = stepsOf(job);
        const actual = shape.steps.map((_, index) => steps[`s${index}`]?.status);
        const failed = expected.includes('failed!');
        expect(job.status).toBe(failed ? 'failed' : 'completed');
        // A failure the workflow does not handle stops the steps still running, wherever they were:
        // which ones depends on the order of the replies. Without one, every status is decided.
        if (!failed) expect(actual).toEqual(expected);

        const skipped = new Set(
          shape.steps.map((_, i) => `s${i}`).filter((name) => steps[name]?.status === 'skipped'),
        );
        expect(sent.filter((request) => request.jobId === job.id && skipped.has(request.step))).toEqual([]);

        const callSteps = shape.steps
          .map((step, i) => ({ step, name: `s${i}` }))
          .filter(({ step, name }) => step.call && (steps[name]?.attempts ?? 0) > 0);
        const callees = jobs.filter((other) => other.workflow === 'callee');
        expect(callees).toHaveLength(callSteps.length);
        expect(new Set(callees.map((callee) => callee.calledBy?.step)).size).toBe(callSteps.length);
        for (const { name } of callSteps) {
          if (steps[name]?.status === 'completed')
            expect(callees.find((callee) => callee.calledBy?.step === name)?.status).toBe('completed');
        }
        const handlers = jobs.filter((other) => other.workflow === 'handler');
        expect(handlers.map((handler) => handler.causedBy)).toEqual(failed ? [job.id] : []);
        if (failed) expect(job.followUp).toBe(handlers[0]?.id);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('decides the same whatever the order of the replies', async () => {
    await fc.assert(
      fc.asyncProperty(handledOnly, deliveryArbitrary, deliveryArbitrary, async (shape, first, second) => {
        const a = await run(shape, first);
        const b = await run(shape, second);
        expect(b.job.steps.map((step) => [step.name, step.status, step.output])).toEqual(
          a.job.steps.map((step) => [step.name, step.status, step.output]),
        );
        expect(b.job.result).toEqual(a.job.result);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
