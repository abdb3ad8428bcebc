import {
  applyEvent,
  ChildGatherer,
  type CompiledWorkflow,
  compileWorkflow,
  createJob,
  type JobRecord,
  type WorkflowDefinition,
} from '../engine/index.js';
import { peakRssMb, resetPeakRss } from './proc.js';
import { formatSpread, mb, repeat, spread } from './stats.js';

/**
 * The pure engine alone: step transitions per second on a long chain and a wide DAG, and one fan-out
 * from dispatch through fan-in. No store, no bus: this is the ceiling the runtimes build on.
 */

const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const now = 1_767_225_600_000;

function chain(length: number): CompiledWorkflow {
  const steps = Array.from({ length }, (_, i) =>
    i === 0 ? { name: 's0' } : { name: `s${i}`, depends: [`s${i - 1}`] },
  );
  return compileWorkflow({ name: 'chain', steps } as WorkflowDefinition, 1);
}

/** A chain whose every step has a condition and an input mapping (expressions compiled once here). */
function conditionalChain(length: number): CompiledWorkflow {
  const steps = Array.from({ length }, (_, i) => ({
    name: `s${i}`,
    ...(i === 0 ? {} : { depends: [`s${i - 1}`] }),
    when: 'input.n > 0 && !has(input.error)',
    input: '{"n": input.n + 1, "job": job.id}',
  }));
  return compileWorkflow({ name: 'conditional-chain', steps } as WorkflowDefinition, 1);
}

function wide(width: number): CompiledWorkflow {
  const middle = Array.from({ length: width }, (_, i) => ({ name: `m${i}`, depends: ['root'] }));
  const definition = {
    name: 'wide',
    steps: [{ name: 'root' }, ...middle, { name: 'sink', depends: middle.map((step) => step.name) }],
  } as WorkflowDefinition;
  return compileWorkflow(definition, 1);
}

// Each reply names one of 100 keys, so jobs of 100 and of 1,000 steps see the same 100 object
// shapes: a key per step gave the 1,000-step jobs ten times as many, which measured V8's inline
// caches (a chain of 1,000 ran 80% as fast as one of 100 with a key per step, 97% with one shape).
const OUTPUT_KEYS = Array.from({ length: 100 }, (_, i) => `k${i}`);

/** Runs jobs to completion by replying to every request in order; counts step transitions. */
function runJobs(workflow: CompiledWorkflow, jobs: number): { transitions: number; seconds: number } {
  let transitions = 0;
  const started = process.hrtime.bigint();
  for (let j = 0; j < jobs; j++) {
    let t = createJob(workflow, { id: uuid(j + 1), input: { n: j } }, { now });
    let job: JobRecord = t.job;
    const queue = [...t.requests];
    while (queue.length) {
      const request = queue.shift();
      if (!request) break;
      t = applyEvent(
        workflow,
        job,
        {
          type: 'reply',
          step: request.step,
          output: { n: 1, [OUTPUT_KEYS[transitions % 100] as string]: 1 },
        },
        { now },
      );
      job = t.job;
      transitions++;
      queue.push(...t.requests);
    }
    if (job.status !== 'completed') throw new Error('benchmark job did not complete');
  }
  return { transitions, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function fanOut(children: number): { seconds: number; heapMb: number; peakRssMb: number } {
  const workflow = compileWorkflow(
    {
      name: 'fan',
      steps: [
        { name: 'each', task: 'per-item' },
        { name: 'after', depends: ['each'] },
      ],
      tasks: [{ name: 'per-item', itemListKey: 'items', steps: [{ name: 'work' }] }],
    } as WorkflowDefinition,
    1,
  );
  const items = Array.from({ length: children }, (_, i) => i);
  resetPeakRss();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  const node = workflow.main.byName.get('each');
  const gatherer = new ChildGatherer(node?.task as NonNullable<typeof node>['task'] & object, children);
  // The parent's first transition creates the first slice of children; each createChildren
  // follow-up, applied to the parent, the next. Each slice's children complete before the next.
  let slice = createJob(workflow, { id: uuid(1), input: { items } }, { now });
  let created = 0;
  for (;;) {
    created += slice.creates.length;
    for (const child of slice.creates) {
      const done = applyEvent(
        workflow,
        child,
        { type: 'reply', step: 'work', output: { item: (child.input.item as number) * 2 } },
        { now },
      );
      gatherer.add([{ index: child.parent?.index ?? -1, input: child.input, result: done.job.result }]);
    }
    const next = slice.followUps.find((followUp) => followUp.kind === 'createChildren');
    if (!next) break;
    slice = applyEvent(
      workflow,
      slice.job,
      { type: 'createChildren', step: 'each', from: next.from },
      { now },
    );
  }
  if (created !== children || !gatherer.complete) throw new Error('fan-out did not create its children');
  const fanIn = applyEvent(
    workflow,
    slice.job,
    { type: 'fanIn', step: 'each', output: gatherer.output() },
    { now },
  );
  if (fanIn.requests[0]?.step !== 'after') throw new Error('fan-in did not dispatch the next step');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    seconds,
    heapMb: mb(process.memoryUsage().heapUsed - heapBefore),
    peakRssMb: peakRssMb(process.pid) ?? Number.NaN,
  };
}

export interface EngineFigures {
  chainPerSecond: number[];
  widePerSecond: number[];
  /** The same with 1,000 steps per job: a transition's cost should not grow with the job's size. */
  chain1000PerSecond: number[];
  wide1000PerSecond: number[];
  /** A 100-step chain with a `when:` and an `input:` on every step. */
  conditionalPerSecond: number[];
  /** Per size: dispatch to fan-in seconds, heap growth, and the process's peak RSS meanwhile. */
  fanOut: Record<number, { seconds: number[]; heapMb: number[]; peakRssMb: number[] }>;
}

export async function benchEngine(runs = 5, sizes = [10_000, 100_000]): Promise<EngineFigures> {
  const longChain = chain(100);
  const wideDag = wide(100);
  const chain1000 = chain(1_000);
  const wide1000 = wide(1_000);
  const conditional = conditionalChain(100);
  // Warm-up: V8 needs a few thousand transitions of each shape before its optimised code settles.
  const shapes = [
    { workflow: longChain, jobs: 1_000 },
    { workflow: wideDag, jobs: 1_000 },
    { workflow: chain1000, jobs: 100 },
    { workflow: wide1000, jobs: 100 },
    { workflow: conditional, jobs: 200 },
  ];
  for (const { workflow, jobs } of shapes) runJobs(workflow, jobs / 5);
  // Each round runs every shape once (about 100,000 transitions each), so that whatever slows the
  // machine for a while slows all of them alike and the sizes compare side by side.
  const perSecond: number[][] = shapes.map(() => []);
  for (let round = 0; round < runs; round++) {
    shapes.forEach(({ workflow, jobs }, n) => {
      const { transitions, seconds } = runJobs(workflow, jobs);
      perSecond[n]?.push(transitions / seconds);
    });
  }
  const fan: EngineFigures['fanOut'] = {};
  for (const size of sizes) {
    fanOut(Math.min(size, 1_000));
    const results = await repeat(runs, () => {
      (globalThis as { gc?: () => void }).gc?.();
      return fanOut(size);
    });
    fan[size] = {
      seconds: results.map((r) => r.seconds),
      heapMb: results.map((r) => r.heapMb),
      peakRssMb: results.map((r) => r.peakRssMb),
    };
  }
  return {
    chainPerSecond: perSecond[0] ?? [],
    widePerSecond: perSecond[1] ?? [],
    chain1000PerSecond: perSecond[2] ?? [],
    wide1000PerSecond: perSecond[3] ?? [],
    conditionalPerSecond: perSecond[4] ?? [],
    fanOut: fan,
  };
}

/** Each round's `large / small` as a percentage: median (min, max). */
function ratios(large: readonly number[], small: readonly number[]): string {
  const percent = large.map((rate, round) => (100 * rate) / (small[round] ?? Number.NaN));
  const { median, min, max } = spread(percent);
  return `${median.toFixed(0)}% (${min.toFixed(0)}–${max.toFixed(0)}%)`;
}

export function reportEngine(figures: EngineFigures): string {
  const lines = [
    '| engine alone | figure (median, min, max of runs) |',
    '| --- | --- |',
    `| long chain (100 steps), transitions/s | ${formatSpread(spread(figures.chainPerSecond))} |`,
    `| wide DAG (1 -> 100 -> 1), transitions/s | ${formatSpread(spread(figures.widePerSecond))} |`,
    `| long chain (1,000 steps), transitions/s | ${formatSpread(spread(figures.chain1000PerSecond))} |`,
    `| wide DAG (1 -> 1,000 -> 1), transitions/s | ${formatSpread(spread(figures.wide1000PerSecond))} |`,
    `| 1,000 steps against 100, each round's ratio: chain; wide DAG | ${ratios(figures.chain1000PerSecond, figures.chainPerSecond)}; ${ratios(figures.wide1000PerSecond, figures.widePerSecond)} |`,
    `| long chain (100 steps), a \`when:\` and an \`input:\` on every step, transitions/s | ${formatSpread(spread(figures.conditionalPerSecond))} |`,
  ];
  for (const [size, result] of Object.entries(figures.fanOut)) {
    lines.push(
      `| fan-out of ${Number(size).toLocaleString('en-US')} children, dispatch to fan-in, s | ${formatSpread(spread(result.seconds), 2)} |`,
    );
    lines.push(
      `| fan-out of ${Number(size).toLocaleString('en-US')} children, heap growth, MB | ${formatSpread(spread(result.heapMb), 0)} |`,
    );
    lines.push(
      `| fan-out of ${Number(size).toLocaleString('en-US')} children, peak RSS of the process, MB | ${formatSpread(spread(result.peakRssMb), 0)} |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(reportEngine(await benchEngine()));
}
