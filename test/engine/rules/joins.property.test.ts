import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { scaled } from '../../support/soak.js';
import { stepsOf } from '../../support/steps-of.js';

/*
 * Issue 30: whatever the graph, the joins, the conditions and the handled failures, a step runs iff
 * its join rule holds over its dependencies' final statuses (and its own `when:`). The rules are
 * restated here from docs/workflows.md, not taken from the engine.
 */

const RUNS = scaled(60, 1_000, 'JOIN_PROPERTY_RUNS');
const RULES = ['all_completed', 'none_failed', 'any_completed'] as const;

interface StepPlan {
  depends: number[];
  join: (typeof RULES)[number];
  go: boolean;
  fails: boolean;
}

const plans = fc.integer({ min: 1, max: 8 }).chain((count) =>
  fc.tuple(
    ...Array.from({ length: count }, (_, index) =>
      fc.record({
        depends: fc.subarray(Array.from({ length: index }, (_, i) => i)),
        join: fc.constantFrom(...RULES),
        go: fc.boolean(),
        fails: fc.boolean(),
      }),
    ),
  ),
);

function yamlOf(steps: readonly StepPlan[]): string {
  const lines = ['workflows:', '  - name: joins', '    steps:'];
  steps.forEach((step, index) => {
    lines.push(
      `      - name: s${index}`,
      `        when: job.input.go[${index}]`,
      '        continueOnError: true',
    );
    if (step.depends.length) {
      lines.push(
        `        depends: [ ${step.depends.map((i) => `s${i}`).join(', ')} ]`,
        `        join: ${step.join}`,
      );
    }
  });
  return `${lines.join('\n')}\n`;
}

/** The documented rule: does a step run, given its dependencies' final statuses? */
function joinHolds(rule: StepPlan['join'], statuses: readonly string[]): boolean {
  if (statuses.length === 0) return true;
  if (rule === 'any_completed') return statuses.includes('completed');
  if (rule === 'none_failed') return !statuses.includes('failed');
  return statuses.some((status) => status !== 'skipped');
}

describe('Property: joins', () => {
  it('a step runs iff its join rule holds over its dependencies’ final statuses', async () => {
    await fc.assert(
      fc.asyncProperty(plans, async (steps) => {
        const w = new SimulatedWorld();
        await w.register(yamlOf(steps));
        const id = await w.start('joins', { go: steps.map((step) => step.go) });
        for (let requests = w.take(); requests.length; requests = w.take()) {
          for (const request of requests) {
            const index = Number(request.step.slice(1));
            if (steps[index]?.fails) await w.reply(request, { error: 'no' }, { type: 'error' });
            else await w.reply(request, { [`out${index}`]: true });
          }
        }
        const job = await w.job(id);
        expect(job.status).toBe('completed');
        const states = stepsOf(job);
        steps.forEach((step, index) => {
          const statuses = step.depends.map((i) => states[`s${i}`]?.status as string);
          const ran = states[`s${index}`]?.status !== 'skipped';
          expect(ran, `s${index} (${step.join} over ${statuses.join(', ')})`).toBe(
            joinHolds(step.join, statuses) && step.go,
          );
          if (ran) expect(states[`s${index}`]?.status).toBe(step.fails ? 'failed' : 'completed');
        });
      }),
      { numRuns: RUNS },
    );
  });
});
