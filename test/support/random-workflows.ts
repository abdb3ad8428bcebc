import fc from 'fast-check';
import { expect } from 'vitest';
import type { JsonObject, StepRequest, Store } from '../../engine/index.js';
import { MemoryStore } from '../../functions/adapters/memory/store.js';
import type { LogFields, Telemetry } from '../../functions/telemetry/telemetry.js';
import { noMetrics } from '../../functions/telemetry/telemetry.js';
import { SimulatedWorld } from './simulated-world.js';

/** A random valid workflow: steps depend on earlier steps only (a DAG), some fan out over tasks. */
export interface Shape {
  main: { depends: number[]; task: number | null }[];
  tasks: { depends: number[]; task: number | null }[][];
  lists: number[];
}

const stepsShape = (size: number, taskCount: number) =>
  fc.array(
    fc.record({
      dependsBits: fc.nat(),
      task: fc.option(fc.nat({ max: Math.max(0, taskCount - 1) }), { nil: null }),
    }),
    { minLength: 1, maxLength: size },
  );

export const shapeArbitrary: fc.Arbitrary<Shape> = fc
  .record({
    taskCount: fc.integer({ min: 0, max: 2 }),
    lists: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 12, maxLength: 12 }),
  })
  .chain(({ taskCount, lists }) =>
    fc
      .record({
        main: stepsShape(6, taskCount),
        tasks: fc.array(stepsShape(3, taskCount), { minLength: taskCount, maxLength: taskCount }),
      })
      .map(({ main, tasks }) => {
        const toSteps = (raw: { dependsBits: number; task: number | null }[], taskIndex: number | null) =>
          raw.map((step, index) => ({
            depends: Array.from({ length: index }, (_, d) => d).filter((d) => (step.dependsBits >> d) & 1),
            // Tasks may only use later tasks, so nesting never loops; a task's fan-out steps need an
            // ancestor (a child's own input has no list to fan out over).
            task:
              taskCount === 0 ||
              step.task === null ||
              (taskIndex !== null &&
                (step.task <= taskIndex || index === 0 || !((step.dependsBits & ((1 << index) - 1)) > 0)))
                ? null
                : step.task,
          }));
        return { main: toSteps(main, null), tasks: tasks.map((task, t) => toSteps(task, t)), lists };
      }),
  );

export function toYaml(shape: Shape): string {
  const steps = (list: Shape['main'], prefix: string, indent: string) =>
    list
      .map((step, index) => {
        const lines = [`${indent}- name: ${prefix}${index}`];
        if (step.depends.length)
          lines.push(`${indent}  depends: [ ${step.depends.map((d) => `${prefix}${d}`).join(', ')} ]`);
        if (step.task !== null) lines.push(`${indent}  task: t${step.task}`);
        return lines.join('\n');
      })
      .join('\n');
  const tasks = shape.tasks
    .map(
      (task, t) =>
        `      - name: t${t}\n        itemListKey: items\n        steps:\n${steps(task, `t${t}s`, '          ')}`,
    )
    .join('\n');
  return `workflows:\n  - name: random\n    steps:\n${steps(shape.main, 's', '      ')}\n${tasks ? `    tasks:\n${tasks}\n` : ''}`;
}

/** What a worker replies: a deterministic function of its input, carrying a list for later fan-outs. */
function workerOutput(request: StepRequest, shape: Shape): JsonObject {
  const digest = JSON.stringify(request.body).length;
  const length = shape.lists[(request.step.length + digest) % shape.lists.length] ?? 0;
  return {
    ...request.body,
    [request.step]: digest,
    items: Array.from({ length }, (_, i) => `${request.step}-${i}`),
  };
}

export interface Delivery {
  order: number[];
  duplicates: boolean[];
  batchSizes: number[];
}

export const deliveryArbitrary: fc.Arbitrary<Delivery> = fc.record({
  order: fc.array(fc.nat(), { minLength: 50, maxLength: 50 }),
  duplicates: fc.array(fc.boolean(), { minLength: 50, maxLength: 50 }),
  batchSizes: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 50, maxLength: 50 }),
});

/** Collects "job completed" and "step completed" events per job and step, to count them. */
function countingTelemetry() {
  const counts = new Map<string, number>();
  const count = (message: string, fields?: LogFields) => {
    if (message !== 'job completed' && message !== 'step completed') return;
    const key = `${message}|${fields?.jobId}|${fields?.step ?? ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const telemetry: Telemetry = {
    logger: { debug: count, info: count, warn: () => {}, error: () => {} },
    metrics: noMetrics,
  };
  return { telemetry, counts };
}

export async function runJob(
  shape: Shape,
  delivery: Delivery | null,
  store: Store = new MemoryStore(),
  fanOutSlice?: number,
) {
  const { telemetry, counts } = countingTelemetry();
  const world = new SimulatedWorld(store, telemetry, undefined, fanOutSlice);
  await world.register(toYaml(shape));
  const id = await world.start('random', { items: ['a', 'b'] }, '00000000-0000-4000-8000-000000000001');
  const pool: StepRequest[] = [];
  const dispatches = new Map<string, number>();
  let turn = 0;
  const collect = async () => {
    for (const request of world.take()) {
      dispatches.set(request.correlationId, (dispatches.get(request.correlationId) ?? 0) + 1);
      // No step may be dispatched before its ancestors completed.
      const job = await world.job(request.jobId);
      const workflow = await world.manager.workflows.get(job.workflow, job.version);
      const graph = job.task === null ? workflow?.main : workflow?.tasks.get(job.task);
      for (const dependency of graph?.byName.get(request.step)?.depends ?? []) {
        expect(
          job.steps.find((step) => step.name === dependency)?.status,
          `${request.step} dispatched before ${dependency} completed`,
        ).toBe('completed');
      }
      pool.push(request);
    }
  };
  await collect();
  const late: StepRequest[] = [];
  const duplicated = new Set<StepRequest>();
  while (pool.length) {
    const size = delivery ? (delivery.batchSizes[turn % 50] ?? 1) : 1;
    const batch: StepRequest[] = [];
    for (let n = 0; n < size && pool.length; n++) {
      const pick = delivery ? (delivery.order[turn % 50] ?? 0) % pool.length : 0;
      const [request] = pool.splice(pick, 1);
      batch.push(request as StepRequest);
      if (delivery?.duplicates[turn % 50] && !duplicated.has(request as StepRequest)) {
        // Delivered again: once more later in the run, and once after the job ended.
        duplicated.add(request as StepRequest);
        pool.push(request as StepRequest);
        late.push(request as StepRequest);
      }
      turn++;
    }
    await world.deliver(
      batch.map((request) => ({
        correlationId: request.correlationId,
        body: JSON.stringify(workerOutput(request, shape)),
      })),
    );
    await collect();
  }
  // Duplicates and late replies, after everything else.
  if (late.length) {
    await world.deliver(
      late.map((request) => ({
        correlationId: request.correlationId,
        body: JSON.stringify(workerOutput(request, shape)),
      })),
    );
    await collect();
  }
  return { job: await world.job(id), counts, dispatches };
}
