import { setTimeout } from 'node:timers/promises';
import { runOnce, type Workload } from './local.js';
import { runLowLoadOnce } from './low-load.js';
import { runCoreOnce } from './manager-core-run.js';
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
 * `core-chain` and `core-diamond` run the manager's core alone instead (bench/manager-core.ts: the
 * engine and the SQLite store, no broker, no HTTP), from each checkout's sources on the benchmark's
 * own Node.js: 100-step chains one at a time, or diamonds 200 at a time. With no broker and no
 * driver beside it, it tells apart a change to the core's CPU that serve's runs cannot.
 *
 * Environment: BENCH_BEFORE_ROOT (required), BENCH_PAIRS (default 4), BENCH_WORKLOAD (`diamond`,
 * `fan-out`, `low-load`, `core-chain` or `core-diamond`, default diamond), BENCH_SIZE (default 5000;
 * for `low-load`, the chains of 100 steps measured, default 5; for `core-chain`, 40 chains after 20;
 * for `core-diamond`, 10,000 diamonds after 3,000), BENCH_PAUSE_MS (before each run, default 3000).
 * `low-load` also prints the overhead a step (bench/low-load.ts). The summary counts the pairs in
 * which each side took less CPU.
 */

const env = process.env;
const beforeRoot = env.BENCH_BEFORE_ROOT;
if (!beforeRoot) throw new Error('BENCH_BEFORE_ROOT must name the checkout to compare with');
const pairs = Number(env.BENCH_PAIRS ?? 4);
const pauseMs = Number(env.BENCH_PAUSE_MS ?? 3_000);
const workload = (env.BENCH_WORKLOAD ?? 'diamond') as Workload | 'low-load' | 'core-chain' | 'core-diamond';
const DEFAULT_SIZES: Record<string, number> = { 'low-load': 5, 'core-chain': 40, 'core-diamond': 10_000 };
const size = Number(env.BENCH_SIZE ?? DEFAULT_SIZES[workload] ?? 5000);
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
    if (workload === 'core-chain' || workload === 'core-diamond') {
      const chains = workload === 'core-chain';
      const run = await runCoreOnce(size, chains ? 20 : 3_000, 'FULL', {
        shape: chains ? 'chain' : 'diamond',
        root,
      });
      cpu[name]?.push(run.cpuUsPerStep);
      process.stdout.write(
        `pair ${pair} ${name}: the core ${run.cpuUsPerStep.toFixed(1)} µs of CPU a step (${run.cpuSeconds.toFixed(3)} s), ` +
          `${Math.round(run.stepsPerSecond)} steps/s, peak RSS ${Math.round(run.peakRssMb)} MB\n`,
      );
      continue;
    }
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
const who = workload.startsWith('core-') ? 'the core' : 'serve';
for (const [name, values] of Object.entries(cpu)) {
  const { min, median, max } = spread(values);
  const p50s = overhead[name] ?? [];
  const p50 = p50s.length ? spread(p50s) : undefined;
  process.stdout.write(
    `${name}: ${who} ${Math.round(median)} µs a step (min ${Math.round(min)}, max ${Math.round(max)})` +
      (p50
        ? `, overhead p50 ${p50.median.toFixed(2)} ms (min ${p50.min.toFixed(2)}, max ${p50.max.toFixed(2)})`
        : '') +
      '\n',
  );
}
const lower = cpu.after?.filter((after, n) => after < (cpu.before?.[n] ?? Number.NaN)).length ?? 0;
const higher = cpu.after?.filter((after, n) => after > (cpu.before?.[n] ?? Number.NaN)).length ?? 0;
process.stdout.write(`after took less CPU a step in ${lower} of ${pairs} pairs, more in ${higher}\n`);
process.exit(0);
