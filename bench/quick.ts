import { runFloorOnce } from './broker-floor.js';
import { runOnce, type WarmUp } from './local.js';
import { type LowLoadRun, lowLoadLine, runLowLoadOnce } from './low-load.js';
import { loadAverage } from './proc.js';
import { formatSpread, type Spread, spread } from './stats.js';

/*
 * `npm run bench -- --quick`: what serve does on this machine, in under a minute. serve runs 1,000
 * diamonds (durable, SQLite FULL) after a short warm-up, then the broker's floor (bench/floor-manager.ts:
 * the same diamonds over the same RabbitMQ with no store, no engine, no HTTP) runs them too, three
 * times alternating, and the medians are printed side by side with serve's CPU a step; then one
 * 100-step chain at a time (bench/low-load.ts) for the manager's overhead a step at low load against
 * the disk's sync. A first look at this machine, not BENCHMARKS.md's figures: it writes no file.
 */

export const QUICK_RUNS = 3;

export const QUICK_DIAMONDS = 1000;
/** Less than the full benchmark's warm-up (3,000 + 1,000 diamonds): V8 has optimised most of the hot paths by then. */
const QUICK_WARM_UP: WarmUp = { diamonds: 1500, fanOutItems: 0, last: { diamonds: 500, fanOutItems: 0 } };

export interface QuickFigures {
  serveStepsPerSecond: Spread;
  floorStepsPerSecond: Spread;
  /** serve's CPU a step, µs (utime + stime over the workload / steps). */
  serveCpuUsPerStep: Spread;
  /** The floor's share of each pair of runs, serve's rate / the floor's, percent. */
  shareOfFloor: Spread;
  lowLoad: LowLoadRun;
  loadAverage: number;
}

export async function benchQuick(log: (line: string) => void): Promise<QuickFigures> {
  const load = loadAverage();
  const serve: number[] = [];
  const floor: number[] = [];
  const cpu: number[] = [];
  for (let r = 1; r <= QUICK_RUNS; r++) {
    const { run } = await runOnce('diamond', QUICK_DIAMONDS, 'FULL', { warmUp: QUICK_WARM_UP });
    const floorRun = await runFloorOnce(QUICK_DIAMONDS, QUICK_WARM_UP.diamonds + QUICK_WARM_UP.last.diamonds);
    serve.push(run.stepsPerSecond);
    floor.push(floorRun.stepsPerSecond);
    cpu.push(((run.cpuSeconds.serve ?? Number.NaN) * 1e6) / run.steps);
    log(
      `run ${r} of ${QUICK_RUNS}: serve ${Math.round(run.stepsPerSecond)} steps/s, ` +
        `the floor ${Math.round(floorRun.stepsPerSecond)} steps/s`,
    );
  }
  const lowLoad = await runLowLoadOnce({ chains: 3, warmChains: 15 });
  return {
    lowLoad,
    serveStepsPerSecond: spread(serve),
    floorStepsPerSecond: spread(floor),
    serveCpuUsPerStep: spread(cpu),
    shareOfFloor: spread(serve.map((rate, n) => (100 * rate) / (floor[n] as number))),
    loadAverage: load,
  };
}

export function renderQuick(figures: QuickFigures, cores: number): string {
  return [
    `${QUICK_DIAMONDS} diamonds (4 steps each), ${QUICK_RUNS} runs alternating, medians (min, max):`,
    `serve:          ${formatSpread(figures.serveStepsPerSecond)} durable steps/s, ` +
      `${formatSpread(figures.serveCpuUsPerStep, 0, ' µs')} of serve's CPU a step`,
    `broker's floor: ${formatSpread(figures.floorStepsPerSecond)} steps/s ` +
      '(the same diamonds, RabbitMQ and workers; a manager with no store, no engine, no HTTP)',
    `serve runs at ${formatSpread(figures.shareOfFloor, 0, '%')} of the broker's floor on this machine ` +
      `(${cores} cores, load average ${figures.loadAverage} at the start).`,
    lowLoadLine(figures.lowLoad),
  ].join('\n');
}
