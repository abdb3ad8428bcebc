import { compileWorkflow, loadWorkflows, type TransitionNote } from '../engine/index.js';
import { recordNotes } from '../functions/manager/transition-telemetry.js';
import { createJsonLogger } from '../functions/telemetry/json-logger.js';
import { PrometheusMetrics } from '../functions/telemetry/prometheus-metrics.js';

/*
 * What a diamond step's telemetry costs serve (`recordNotes`: the step's completion and the next
 * dispatch, counted in Prometheus, logged at INFO so the DEBUG lines are dropped), in µs a step.
 * Run on one checkout, then another, one after the other:
 *   node --import tsx bench/telemetry-notes.ts
 */

const { workflows } = loadWorkflows(`workflows:
  - name: diamond
    steps:
      - name: a
      - name: b
        depends: [a]
      - name: c
        depends: [a]
      - name: d
        depends: [b, c]
`);
const workflow = compileWorkflow(workflows[0] as NonNullable<(typeof workflows)[0]>, 1);
const metrics = new PrometheusMetrics();
const telemetry = { logger: createJsonLogger({ level: 'info', write: () => {} }), metrics };
const job = { id: 'j1', workflow: 'diamond', parent: null, task: null, steps: [] } as unknown as Parameters<
  typeof recordNotes
>[2];
const notes: TransitionNote[] = [
  { kind: 'stepCompleted', jobId: 'j1', step: 'a', attempt: 1, durationMs: 3 },
  { kind: 'dispatched', jobId: 'j1', step: 'b', attempt: 1 },
];
const steps = 300_000;
for (let round = 1; round <= 5; round++) {
  const started = performance.now();
  for (let n = 0; n < steps; n++) recordNotes(telemetry, notes, job, workflow);
  const micros = ((performance.now() - started) * 1000) / steps;
  process.stdout.write(`round ${round}: ${micros.toFixed(2)} µs a step\n`);
}
