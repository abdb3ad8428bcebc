import { setTimeout } from 'node:timers/promises';
import { runOnce, type Workload } from './local.js';
import { runLowLoadOnce } from './low-load.js';
import { spread } from './stats.js';

/*
 * Before and after a change, alternating in one process, as BENCHMARKS.md's before/after sections
 * want: serve of another checkout (`BENCH_BEFORE_ROOT`, built with its own `npm run build:cli`)
 * and this checkout's, each on the same workload after the usual warm-up, pair after pair. Prints
 * serve's CPU a step (from /proc: what a loaded machine moves least) and the rate of each run.
 *
 *   BENCH_BEFORE_ROOT=/path/to/other/checkout node --import tsx bench/before-after.ts
 *
 * BENCH_AFTER_ROOT names another checkout for the after side (default this one), and
 * BENCH_BEFORE_NODE / BENCH_AFTER_NODE the Node.js that runs each side's serve (default the
 * benchmark's own): the same code on two versions of Node.
 *
 * A run right after another can run slower (the broker still deletes the last run's queues: the
 * broker's floor read 10–25% worse second in a pair, BENCHMARKS.md "AMQP clients"), so the pairs
 * alternate which side goes first, with a pause before each run; an even number of pairs gives each
 * side the first place as often.
 *
 * Environment: BENCH_BEFORE_ROOT (required), BENCH_PAIRS (default 4), BENCH_WORKLOAD (`diamond`,
 * `fan-out` or `low-load`, default diamond), BENCH_SIZE (default 5000; for `low-load`, the chains of
 * 100 steps measured, default 5), BENCH_PAUSE_MS (before each run, default 3000). `low-load` also
 * prints the overhead a step (bench/low-load.ts).
 */

const env = process.env;
const beforeRoot = env.BENCH_BEFORE_ROOT;
if (!beforeRoot) throw new Error('BENCH_BEFORE_ROOT must name the checkout to compare with');
const pairs = Number(env.BENCH_PAIRS ?? 4);
const pauseMs = Number(env.BENCH_PAUSE_MS ?? 3_000);
const workload = (env.BENCH_WORKLOAD ?? 'diamond') as Workload | 'low-load';
const size = Number(env.BENCH_SIZE ?? (workload === 'low-load' ? 5 : 5000));
const sides: { name: string; root?: string; node?: string }[] = [
  { name: 'before', root: beforeRoot, node: env.BENCH_BEFORE_NODE },
  { name: 'after', root: env.BENCH_AFTER_ROOT, node: env.BENCH_AFTER_NODE },
];
const cpu: Record<string, number[]> = { before: [], after: [] };
const overhead: Record<string, number[]> = { before: [], after: [] };

for (let pair = 1; pair <= pairs; pair++) {
  for (const { name, root, node } of pair % 2 ? sides : [...sides].reverse()) {
    await setTimeout(pauseMs);
    if (root) process.env.BENCH_SERVE_ROOT = root;
    else delete process.env.BENCH_SERVE_ROOT;
    if (node) process.env.BENCH_SERVE_NODE = node;
    else delete process.env.BENCH_SERVE_NODE;
    if (workload === 'low-load') {
      const run = await runLowLoadOnce({ chains: size });
      const p50 = run.overheadMs['0.5'] ?? Number.NaN;
      cpu[name]?.push(run.serveCpuUsPerStep);
      overhead[name]?.push(p50);
      process.stdout.write(
        `pair ${pair} ${name}: overhead a step p50 ${p50.toFixed(2)} ms, p99 ${(run.overheadMs['0.99'] ?? Number.NaN).toFixed(2)} ms, ` +
          `${run.msPerStep.toFixed(2)} ms a step end to end, serve ${Math.round(run.serveCpuUsPerStep)} µs of CPU a step, ` +
          `SQLite commit p50 ${run.disk.sqliteCommitMs.median.toFixed(2)} ms, load ${run.loadAverage}\n`,
      );
      continue;
    }
    const { run } = await runOnce(workload, size, 'FULL');
    const usPerStep = ((run.cpuSeconds.serve ?? Number.NaN) * 1e6) / run.steps;
    cpu[name]?.push(usPerStep);
    process.stdout.write(
      `pair ${pair} ${name}: serve ${Math.round(usPerStep)} µs of CPU a step, ${Math.round(run.stepsPerSecond)} steps/s, ` +
        `reply batch ${run.meanReplyBatch.toFixed(1)}, peak RSS ${Math.round(run.servePeakRssMb)} MB, load ${run.loadAverage.before}\n`,
    );
  }
}
for (const [name, values] of Object.entries(cpu)) {
  const { min, median, max } = spread(values);
  const p50s = overhead[name] ?? [];
  const p50 = p50s.length ? spread(p50s) : undefined;
  process.stdout.write(
    `${name}: serve ${Math.round(median)} µs a step (min ${Math.round(min)}, max ${Math.round(max)})` +
      (p50
        ? `, overhead p50 ${p50.median.toFixed(2)} ms (min ${p50.min.toFixed(2)}, max ${p50.max.toFixed(2)})`
        : '') +
      '\n',
  );
}
process.exit(0);
