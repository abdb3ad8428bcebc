import { type BenchChild, spawnBenchScript } from './child.js';
import { CHAIN_STEPS } from './low-load.js';
import type { CoreFigures } from './manager-core.js';
import type { Synchronous } from './serve.js';
import { DIAMOND_STEPS } from './workloads.js';

/*
 * Runs bench/manager-core.ts (serve's engine and SQLite store alone, no broker, no HTTP) in a
 * process of its own, beside each diamond case: with the broker's floor, it splits a diamond's
 * cost into the broker's and serve's own.
 */

/** Diamonds running at once: serve's 10,000-diamond runs held 100 to 340 (sampled from /api/workflows). */
export const CORE_IN_FLIGHT = 200;
/** Replies per batch: about the mean batch serve's reply consumer formed in the same runs. */
export const CORE_REPLY_BATCH = 50;

/** The diamonds of the local section, or the low-load case's 100-step chains, one at a time. */
export type CoreShape = 'diamond' | 'chain';

export interface CoreRun {
  workload: CoreShape;
  size: number;
  synchronous: Synchronous;
  steps: number;
  wallSeconds: number;
  stepsPerSecond: number;
  cpuSeconds: number;
  /** CPU microseconds a step. */
  cpuUsPerStep: number;
  peakRssMb: number;
}

export interface CoreOptions {
  /** @default 'diamond' */
  shape?: CoreShape;
  /** The checkout whose core runs, from its sources (default this one): bench/before-after.ts. */
  root?: string;
}

export async function runCoreOnce(
  jobs: number,
  warmJobs: number,
  synchronous: Synchronous,
  options: CoreOptions = {},
): Promise<CoreRun> {
  const shape = options.shape ?? 'diamond';
  let core: BenchChild | undefined;
  try {
    core = await spawnBenchScript('manager-core.ts', {
      name: 'manager-core',
      root: options.root,
      env: {
        BENCH_CORE_SHAPE: shape,
        BENCH_JOBS: String(jobs),
        BENCH_WARM_JOBS: String(warmJobs),
        BENCH_SYNCHRONOUS: synchronous,
        BENCH_IN_FLIGHT: String(CORE_IN_FLIGHT),
        BENCH_REPLY_BATCH: String(CORE_REPLY_BATCH),
      },
      readyLine: 'done ',
      readyTimeoutMs: Math.max(120_000, (jobs + warmJobs) * (shape === 'chain' ? 3_000 : 30)),
    });
    const line = core.output().match(/^done (\{.*\})$/m);
    if (!line) throw new Error('it printed no figures');
    const figures = JSON.parse(line[1] as string) as CoreFigures;
    const steps = jobs * (shape === 'chain' ? CHAIN_STEPS : DIAMOND_STEPS);
    return {
      workload: shape,
      size: jobs,
      synchronous,
      steps,
      wallSeconds: figures.wallSeconds,
      stepsPerSecond: steps / figures.wallSeconds,
      cpuSeconds: figures.cpuSeconds,
      cpuUsPerStep: (figures.cpuSeconds / steps) * 1e6,
      peakRssMb: figures.peakRssMb,
    };
  } catch (error) {
    throw new Error(
      `the manager's core, ${jobs} ${shape === 'chain' ? 'chains' : 'diamonds'} (${synchronous}), failed: ${(error as Error).message}\n` +
        `it said:\n${core?.output().slice(-4_000) ?? '(not started)'}`,
    );
  } finally {
    await core?.stop();
  }
}
