import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FloorRun, runFloorOnce } from './broker-floor.js';
import { type BenchChild, waitFor, whileRunning } from './child.js';
import { getJob, listJobs, readMetrics, submitJobs, waitUntilIdle } from './http-driver.js';
import { type LowLoadOptions, type LowLoadRun, lowLoadLine, runLowLoadOnce } from './low-load.js';
import { type CoreRun, runCoreOnce } from './manager-core-run.js';
import { quantilesMs, windowFigures } from './metrics-window.js';
import { CpuWindow, cpuLine, loadAverage, peakRssMb, pidsNamed } from './proc.js';
import {
  type HeapSummary,
  monotonicUs,
  type ProfileSummary,
  summariseHeapProfile,
  summariseProfile,
} from './profile-summary.js';
import { deleteQueues, replyQueueConsumed, startWorkers } from './rabbitmq-side.js';
import { type BenchServe, type Synchronous, startBenchServe } from './serve.js';
import {
  benchQueues,
  benchWorkflowsYaml,
  DIAMOND,
  DIAMOND_STEPS,
  FAN_OUT,
  fanOutSteps,
  SUBMIT_CONCURRENCY,
} from './workloads.js';

/*
 * The local, durable runtime measured end to end: `switchyard serve` in its own process (a fresh
 * SQLite file, a unique reply queue), the echo workers in another (plain amqplib, prefetch 200,
 * persistent replies, ack after replying), RabbitMQ as installed, and this process as the driver,
 * submitting over HTTP. Every run gets fresh processes and queue names, and deletes its queues.
 */

export type Workload = 'diamond' | 'fan-out';

export interface LocalRun {
  workload: Workload;
  /** Jobs (diamond) or items (fan-out). */
  size: number;
  synchronous: Synchronous;
  steps: number;
  /** First submission to the last job's end (its stored end time). */
  wallSeconds: number;
  stepsPerSecond: number;
  /** Fan-out: items gathered per second. */
  itemsPerSecond?: number;
  /** The manager's overhead per step from /metrics, milliseconds. */
  overheadMs: Record<string, number>;
  meanReplyBatch: number;
  servePeakRssMb: number;
  /** CPU seconds over the workload, by process: serve, workers, rabbitmq (beam.smp), driver. */
  cpuSeconds: Record<string, number>;
  loadAverage: { before: number; after: number };
}

export interface LocalOptions {
  runs: number;
  diamondJobs: number[];
  fanOutItems: number[];
  synchronous: Synchronous[];
  /** Also run each case once under the CPU profiler (not counted), writing serve's profiles here. */
  cpuProfileDir?: string;
  /** Also run the largest fan-out once sampling serve's allocations (not counted), profiles here. */
  heapProfileDir?: string;
  /** Runs of the low-load chain (bench/low-load.ts). @default runs */
  lowLoadRuns?: number;
  /** Its sizes (the harness's smoke test runs a toy chain). */
  lowLoad?: LowLoadOptions;
  /** Fan-outs this large run once each after the other cases, SQLite FULL (`npm run bench -- --million`). */
  hugeFanOuts?: number[];
  log?: (line: string) => void;
}

export interface LocalFigures {
  serveCommand: string;
  runs: LocalRun[];
  /** The broker's floor beside each diamond case (bench/broker-floor.ts), alternating with serve's runs. */
  floorRuns?: FloorRun[];
  /** serve's engine and store alone beside each diamond case and level (bench/manager-core-run.ts). */
  coreRuns?: CoreRun[];
  /** serve's CPU profiles over the workload (an extra run of each case), when asked for. */
  profiles?: ProfileSummary[];
  /** serve's heap in the largest fan-out (live at the fullest, and all allocations), when asked for. */
  heapProfiles?: HeapSummary[];
  /** One 100-step chain at a time, one worker: the manager's overhead a step against the disk's sync. */
  lowLoadRuns?: LowLoadRun[];
  /** The huge fan-outs (a million children), one run each. */
  hugeFanOutRuns?: LocalRun[];
}

/** Generous: a run that takes longer than this is reported as failed, not waited for. */
const timeoutMs = (workload: Workload, size: number): number =>
  workload === 'diamond' ? Math.max(120_000, size * 30) : Math.max(120_000, size * 6);

export interface RunResult {
  run: LocalRun;
  serveCommand: string;
  servePid: number;
  /** When the workload ran, on the clock of CPU profiles (monotonic µs). */
  window: { fromUs: number; toUs: number };
}

/**
 * Jobs run on a fresh serve before measuring, so that V8 has compiled the hot paths. After 500
 * diamonds V8 was still optimising them while the workload ran (`--log-function-events`: TurboFan
 * jobs for apply, applyCommit and send, 14 to 56 ms each), which cost the 1,000-job diamond a fifth
 * of its rate; after 3,000 the rate stops rising.
 */
/**
 * Both workloads, then the measured one's shape once more (`last`): V8 re-optimises what the other
 * shape deoptimised ("wrong map") before the measurement, not during it.
 */
export const WARM_UP: WarmUp = {
  diamonds: 3000,
  fanOutItems: 1000,
  last: { diamonds: 1000, fanOutItems: 1000 },
};

export interface WarmUp {
  diamonds: number;
  fanOutItems: number;
  last: { diamonds: number; fanOutItems: number };
}

async function warmUp(url: string, workload: Workload, sizes: WarmUp): Promise<void> {
  await submitJobs(url, DIAMOND, sizes.diamonds, SUBMIT_CONCURRENCY);
  if (sizes.fanOutItems) await submitJobs(url, FAN_OUT, 1, 1, () => ({ count: sizes.fanOutItems }));
  await waitUntilIdle(url, DIAMOND, 60_000);
  await waitUntilIdle(url, FAN_OUT, 60_000);
  if (workload === 'diamond') {
    await submitJobs(url, DIAMOND, sizes.last.diamonds, SUBMIT_CONCURRENCY);
    await waitUntilIdle(url, DIAMOND, 60_000);
  } else {
    await submitJobs(url, FAN_OUT, 1, 1, () => ({ count: sizes.last.fanOutItems }));
    await waitUntilIdle(url, FAN_OUT, 60_000);
  }
}

/** Runs the workload against serve; returns when it ended (ms epoch) and the CPU it took. */
async function drive(
  url: string,
  workload: Workload,
  size: number,
  cpu: CpuWindow,
): Promise<{ ended: number; cpuSeconds: Record<string, number>; cpuStoppedUs: number }> {
  if (workload === 'diamond') {
    const submitted = await submitJobs(url, DIAMOND, size, SUBMIT_CONCURRENCY);
    await waitUntilIdle(url, DIAMOND, timeoutMs(workload, size));
    const cpuSeconds = cpu.stop();
    const cpuStoppedUs = monotonicUs();
    const ids = new Set(submitted);
    const completed = (await listJobs(url, DIAMOND, 'completed')).filter((job) => ids.has(job.uuid));
    if (completed.length !== size) throw new Error(`${completed.length} of ${size} diamonds completed`);
    return {
      ended: Math.max(...completed.map((job) => Date.parse(job.updatedAt))),
      cpuSeconds,
      cpuStoppedUs,
    };
  }
  const [id] = await submitJobs(url, FAN_OUT, 1, 1, () => ({ count: size }));
  await waitUntilIdle(url, FAN_OUT, timeoutMs(workload, size));
  const cpuSeconds = cpu.stop();
  const cpuStoppedUs = monotonicUs();
  const job = await getJob(url, id as string);
  if (job.status !== 'completed') throw new Error(`the fan-out job ended ${job.status}`);
  return { ended: Date.parse(job.endedAt ?? job.updatedAt), cpuSeconds, cpuStoppedUs };
}

interface Instruments {
  /** Write serve's CPU profiles here. */
  cpuProfileDir?: string;
  /** Sample serve's heap into here (serve runs as bench/serve-entry.ts). */
  heapProfileDir?: string;
  heapMode?: 'live' | 'allocations';
  /** Another warm-up than WARM_UP (`npm run bench -- --quick` warms up less). */
  warmUp?: WarmUp;
}

export async function runOnce(
  workload: Workload,
  size: number,
  synchronous: Synchronous,
  instruments: Instruments = {},
): Promise<RunResult> {
  const prefix = `bench-${randomUUID().slice(0, 8)}-`;
  const queues = benchQueues(prefix);
  const replyQueue = `${prefix}replies`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-'));
  const config = join(dir, 'workflows.yaml');
  await writeFile(config, benchWorkflowsYaml(queues));
  let workers: BenchChild | undefined;
  let serve: BenchServe | undefined;
  try {
    workers = await startWorkers(prefix);
    serve = await startBenchServe({
      config,
      db: join(dir, 'bench.db'),
      replyQueue,
      synchronous,
      ...instruments,
      maxFanOut: Math.max(100_000, workload === 'fan-out' ? size : 0),
      maxReplyBytes: workload === 'fan-out' && size > 100_000 ? Math.max(1 << 20, size * 16) : undefined,
    });
    await replyQueueConsumed(replyQueue);
    await whileRunning(serve, warmUp(serve.url, workload, instruments.warmUp ?? WARM_UP));
    const metricsBefore = await readMetrics(serve.url);
    const before = loadAverage();
    const cpu = new CpuWindow({
      serve: [serve.pid],
      workers: [workers.pid],
      rabbitmq: pidsNamed('beam.smp'),
    });
    const started = Date.now();
    const startedUs = monotonicUs();
    const { ended, cpuSeconds, cpuStoppedUs } = await whileRunning(
      serve,
      drive(serve.url, workload, size, cpu),
    );
    const heapDir = instruments.heapProfileDir;
    if (heapDir) {
      process.kill(serve.pid, 'SIGUSR2');
      await waitFor(
        'serve to write its heap profile',
        () => (existsSync(join(heapDir, 'memory-at-peak.json')) ? true : undefined),
        60_000,
        100,
      );
    }
    const metrics = windowFigures(metricsBefore, await readMetrics(serve.url));
    const steps = workload === 'diamond' ? size * DIAMOND_STEPS : fanOutSteps(size);
    const wallSeconds = (ended - started) / 1000;
    const { wallSeconds: _window, ...byProcess } = cpuSeconds;
    return {
      serveCommand: serve.command,
      servePid: serve.pid,
      window: { fromUs: startedUs, toUs: cpuStoppedUs },
      run: {
        workload,
        size,
        synchronous,
        steps,
        wallSeconds,
        stepsPerSecond: steps / wallSeconds,
        itemsPerSecond: workload === 'fan-out' ? size / wallSeconds : undefined,
        overheadMs: quantilesMs(metrics.overhead),
        meanReplyBatch: metrics.meanReplyBatch,
        servePeakRssMb: peakRssMb(serve.pid) ?? Number.NaN,
        cpuSeconds: byProcess,
        loadAverage: { before, after: loadAverage() },
      },
    };
  } catch (error) {
    // What serve and the workers said is the first thing to read when a run fails.
    throw new Error(
      `${workload} ${size} (${synchronous}) failed: ${(error as Error).message}\n` +
        `serve said:\n${serve?.output().slice(-4_000) ?? '(not started)'}\nthe workers said:\n${workers?.output().slice(-2_000) ?? ''}`,
    );
  } finally {
    await serve?.stop();
    await workers?.stop();
    await deleteQueues([...Object.values(queues), replyQueue]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchLocal(options: LocalOptions): Promise<LocalFigures> {
  const log = options.log ?? (() => {});
  const runs: LocalRun[] = [];
  const floorRuns: FloorRun[] = [];
  const coreRuns: CoreRun[] = [];
  const profiles: ProfileSummary[] = [];
  let serveCommand = '';
  const cases: [Workload, number][] = [
    ...options.diamondJobs.map((n): [Workload, number] => ['diamond', n]),
    ...options.fanOutItems.map((n): [Workload, number] => ['fan-out', n]),
  ];
  // The levels' runs alternate, so that a busy spell of the machine falls on both alike.
  for (const [workload, size] of cases) {
    for (const synchronous of options.cpuProfileDir ? options.synchronous : []) {
      const summary = await profileCpu(workload, size, synchronous, options.cpuProfileDir as string, log);
      if (summary) profiles.push(summary);
    }
    for (let r = 0; r < options.runs; r++) {
      for (const synchronous of options.synchronous) {
        const result = await runOnce(workload, size, synchronous);
        serveCommand ||= result.serveCommand;
        runs.push(result.run);
        const run = result.run;
        log(
          `local ${workload} ${size} ${synchronous} run ${r + 1}: ${run.wallSeconds.toFixed(2)} s, ` +
            `${Math.round(run.stepsPerSecond)} steps/s, overhead p50 ${run.overheadMs['0.5']?.toFixed(1)} ms ` +
            `p99 ${run.overheadMs['0.99']?.toFixed(1)} ms, serve ${Math.round(run.servePeakRssMb)} MB, ` +
            `cpu ${cpuLine(run.cpuSeconds)}, load ${run.loadAverage.before}`,
        );
      }
      if (workload === 'diamond') {
        const floor = await runFloorOnce(size, WARM_UP.diamonds + WARM_UP.last.diamonds);
        floorRuns.push(floor);
        log(
          `broker floor diamond ${size} run ${r + 1}: ${floor.wallSeconds.toFixed(2)} s, ` +
            `${Math.round(floor.stepsPerSecond)} steps/s, cpu ${cpuLine(floor.cpuSeconds)}, load ${floor.loadAverage.before}`,
        );
        for (const synchronous of options.synchronous) {
          const core = await runCoreOnce(size, WARM_UP.diamonds + WARM_UP.last.diamonds, synchronous);
          coreRuns.push(core);
          log(
            `manager core diamond ${size} ${synchronous} run ${r + 1}: ${core.wallSeconds.toFixed(2)} s, ` +
              `${Math.round(core.stepsPerSecond)} steps/s, cpu ${core.cpuSeconds.toFixed(1)} s ` +
              `(${Math.round(core.cpuUsPerStep)} µs a step)`,
          );
        }
      }
    }
  }
  const lowLoadRuns: LowLoadRun[] = [];
  for (let r = 0; r < (options.lowLoadRuns ?? options.runs); r++) {
    const run = await runLowLoadOnce(options.lowLoad);
    lowLoadRuns.push(run);
    log(`${lowLoadLine(run)}, load ${run.loadAverage}`);
  }
  const hugeFanOutRuns: LocalRun[] = [];
  for (const size of options.hugeFanOuts ?? []) {
    const { run } = await runOnce('fan-out', size, 'FULL');
    hugeFanOutRuns.push(run);
    log(
      `local fan-out ${size} FULL: ${run.wallSeconds.toFixed(1)} s, ${Math.round(run.itemsPerSecond ?? 0)} children/s, ` +
        `serve peak RSS ${Math.round(run.servePeakRssMb)} MB, cpu ${cpuLine(run.cpuSeconds)}, load ${run.loadAverage.before}`,
    );
  }
  const largest = Math.max(...options.fanOutItems);
  const heapProfiles =
    options.heapProfileDir && Number.isFinite(largest)
      ? await profileHeap(largest, options.heapProfileDir, log)
      : undefined;
  return {
    serveCommand,
    runs,
    floorRuns: floorRuns.length ? floorRuns : undefined,
    coreRuns: coreRuns.length ? coreRuns : undefined,
    profiles: profiles.length ? profiles : undefined,
    heapProfiles,
    lowLoadRuns: lowLoadRuns.length ? lowLoadRuns : undefined,
    hugeFanOutRuns: hugeFanOutRuns.length ? hugeFanOutRuns : undefined,
  };
}

/** One uncounted run under `--cpu-prof`: serve's main thread summarised over the measured window. */
async function profileCpu(
  workload: Workload,
  size: number,
  synchronous: Synchronous,
  root: string,
  log: (line: string) => void,
): Promise<ProfileSummary | undefined> {
  const dir = join(root, `serve-${workload}-${size}-${synchronous}`);
  await rm(dir, { recursive: true, force: true });
  const result = await runOnce(workload, size, synchronous, { cpuProfileDir: dir });
  log(
    `local ${workload} ${size} ${synchronous} profiled: ${result.run.wallSeconds.toFixed(2)} s under the profiler`,
  );
  // bin/switchyard.js re-executes serve's process with its V8 flags: the same pid writes a short
  // profile before the exec and the workload's after it; names start with the date and time.
  const mainThread = (await readdir(dir).catch(() => []))
    .filter((name) => name.includes(`.${result.servePid}.0.`))
    .sort()
    .at(-1);
  if (!mainThread) return undefined;
  return summariseProfile(join(dir, mainThread), `serve, ${workload} ${size}, ${synchronous}`, result.window);
}

/**
 * Two uncounted fan-outs with serve's heap sampled (bench/heap-sampler.ts): what is live when the
 * heap is fullest, and what was allocated over the run.
 */
async function profileHeap(items: number, root: string, log: (line: string) => void): Promise<HeapSummary[]> {
  const summaries: HeapSummary[] = [];
  for (const mode of ['live', 'allocations'] as const) {
    const dir = join(root, `serve-heap-${mode}-fan-out-${items}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const result = await runOnce('fan-out', items, 'FULL', { heapProfileDir: dir, heapMode: mode });
    const peak = JSON.parse(await readFile(join(dir, 'memory-at-peak.json'), 'utf8')) as Record<
      string,
      number
    >;
    log(
      `local fan-out ${items} heap-sampled (${mode}): peak RSS ${Math.round(result.run.servePeakRssMb)} MB`,
    );
    const file = join(dir, mode === 'live' ? 'live-at-peak.heapprofile' : 'allocations.heapprofile');
    if (!existsSync(file)) continue;
    const what =
      mode === 'live' ? 'live objects when the heap was fullest' : 'everything allocated, warm-up included';
    summaries.push(
      await summariseHeapProfile(
        file,
        `serve, fan-out ${items}, FULL: ${what}`,
        result.run.servePeakRssMb,
        peak,
        mode,
      ),
    );
  }
  return summaries;
}
