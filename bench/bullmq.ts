import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { type ConnectionOptions, Queue } from 'bullmq';
import { type BenchChild, spawnBenchScript, waitFor } from './child.js';
import { WARM_UP, type Workload } from './local.js';
import { CpuWindow, cpuLine, loadAverage, peakRssMb } from './proc.js';
import { WORKER_PREFETCH } from './rabbitmq-side.js';
import { type RedisPersistence, startBenchRedis } from './redis.js';
import {
  type BenchQueues,
  benchQueues,
  DIAMOND_STEPS,
  fanOutSteps,
  SUBMIT_CONCURRENCY,
} from './workloads.js';

/*
 * The peer: BullMQ flows on Debian's redis-server, the same workloads (bullmq-flows.ts), the
 * workers in their own process with the echo workers' concurrency, this process as the driver
 * adding the first job of each workflow 20 at a time, as the local driver posts to serve.
 */

export interface BullmqRun {
  workload: Workload;
  size: number;
  persistence: RedisPersistence;
  steps: number;
  /** First job added to the last job's `finishedOn`. */
  wallSeconds: number;
  stepsPerSecond: number;
  itemsPerSecond?: number;
  redisPeakRssMb: number;
  workersPeakRssMb: number;
  /** CPU seconds over the workload: redis, workers (they also add the flows), driver. */
  cpuSeconds: Record<string, number>;
  loadAverage: { before: number; after: number };
}

export interface BullmqOptions {
  runs: number;
  diamondJobs: number[];
  fanOutItems: number[];
  persistence: RedisPersistence[];
  log?: (line: string) => void;
}

export interface BullmqFigures {
  bullmqVersion: string;
  redisVersion: string;
  runs: BullmqRun[];
}

const timeoutMs = (workload: Workload, size: number): number =>
  workload === 'diamond' ? Math.max(120_000, size * 30) : Math.max(120_000, size * 6);

/** The same warm-up as serve's (local.ts WARM_UP): fresh workers compile their hot paths first. */
async function warmUp(queues: BenchQueues, connection: ConnectionOptions, workload: Workload): Promise<void> {
  const open = (name: string) => new Queue(name, { connection });
  const [s1, list, s4, sum] = [open(queues.s1), open(queues.list), open(queues.s4), open(queues.sum)];
  const completed = async (diamonds: number, fanOuts: number) =>
    waitFor(
      'the BullMQ warm-up jobs to complete',
      async () =>
        (await s4.getCompletedCount()) >= diamonds && (await sum.getCompletedCount()) >= fanOuts
          ? true
          : undefined,
      60_000,
      20,
    );
  try {
    await s1.addBulk(Array.from({ length: WARM_UP.diamonds }, () => ({ name: 's1', data: {} })));
    await list.add('list', { count: WARM_UP.fanOutItems });
    await completed(WARM_UP.diamonds, 1);
    if (workload === 'diamond') {
      const { diamonds } = WARM_UP.last;
      await s1.addBulk(Array.from({ length: diamonds }, () => ({ name: 's1', data: {} })));
      await completed(WARM_UP.diamonds + diamonds, 1);
    } else {
      await list.add('list', { count: WARM_UP.last.fanOutItems });
      await completed(WARM_UP.diamonds, 2);
    }
  } finally {
    await Promise.all([s1, list, s4, sum].map((queue) => queue.close().catch(() => {})));
  }
}

async function runOnce(workload: Workload, size: number, persistence: RedisPersistence): Promise<BullmqRun> {
  const prefix = `bench-${randomUUID().slice(0, 8)}-`;
  const queues = benchQueues(prefix);
  const redis = await startBenchRedis(persistence);
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  let workers: BenchChild | undefined;
  const first = new Queue(workload === 'diamond' ? queues.s1 : queues.list, { connection });
  const last = new Queue(workload === 'diamond' ? queues.s4 : queues.sum, { connection });
  try {
    workers = await spawnBenchScript('bullmq-workers.ts', {
      name: 'bullmq-workers',
      env: {
        REDIS_PORT: String(redis.port),
        BENCH_PREFIX: prefix,
        BENCH_CONCURRENCY: String(WORKER_PREFETCH),
      },
      readyLine: 'ready',
    });
    await Promise.all([first.waitUntilReady(), last.waitUntilReady()]);
    await warmUp(queues, connection, workload);
    const baseline = await last.getCompletedCount();
    const before = loadAverage();
    const cpu = new CpuWindow({ redis: [redis.pid], workers: [workers.pid] });
    const started = Date.now();
    const jobs = workload === 'diamond' ? size : 1;
    let next = 0;
    const lane = async () => {
      while (next < jobs) {
        next++;
        await first.add(
          workload === 'diamond' ? 's1' : 'list',
          workload === 'diamond' ? {} : { count: size },
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(SUBMIT_CONCURRENCY, jobs) }, lane));
    await waitFor(
      `${jobs} ${workload} jobs to complete on BullMQ`,
      async () => {
        if (workers?.child.exitCode !== null) throw new Error(`the workers exited:\n${workers?.output()}`);
        const failed = await last.getFailedCount();
        if (failed) throw new Error(`${failed} jobs failed`);
        return (await last.getCompletedCount()) >= baseline + jobs ? true : undefined;
      },
      timeoutMs(workload, size),
      20,
    );
    const { wallSeconds: _window, ...cpuSeconds } = cpu.stop();
    const [newest] = await last.getJobs(['completed'], 0, 0, false);
    const wallSeconds = ((newest?.finishedOn ?? Date.now()) - started) / 1000;
    const steps = workload === 'diamond' ? size * DIAMOND_STEPS : fanOutSteps(size);
    return {
      workload,
      size,
      persistence,
      steps,
      wallSeconds,
      stepsPerSecond: steps / wallSeconds,
      itemsPerSecond: workload === 'fan-out' ? size / wallSeconds : undefined,
      redisPeakRssMb: peakRssMb(redis.pid) ?? Number.NaN,
      workersPeakRssMb: peakRssMb(workers.pid) ?? Number.NaN,
      cpuSeconds,
      loadAverage: { before, after: loadAverage() },
    };
  } finally {
    await first.close().catch(() => {});
    await last.close().catch(() => {});
    await workers?.stop();
    await redis.stop();
  }
}

export async function benchBullmq(options: BullmqOptions): Promise<BullmqFigures> {
  const log = options.log ?? (() => {});
  const runs: BullmqRun[] = [];
  const cases: [Workload, number][] = [
    ...options.diamondJobs.map((n): [Workload, number] => ['diamond', n]),
    ...options.fanOutItems.map((n): [Workload, number] => ['fan-out', n]),
  ];
  // The persistence modes' runs alternate, so that a busy spell of the machine falls on all alike.
  for (const [workload, size] of cases) {
    for (let r = 0; r < options.runs; r++) {
      for (const persistence of options.persistence) {
        const run = await runOnce(workload, size, persistence);
        runs.push(run);
        log(
          `bullmq ${workload} ${size} redis ${persistence} run ${r + 1}: ${run.wallSeconds.toFixed(2)} s, ` +
            `${Math.round(run.stepsPerSecond)} steps/s, redis ${Math.round(run.redisPeakRssMb)} MB, ` +
            `cpu ${cpuLine(run.cpuSeconds)}, load ${run.loadAverage.before}`,
        );
      }
    }
  }
  return { bullmqVersion: bullmqVersion(), redisVersion: redisServerVersion(), runs };
}

export function bullmqVersion(): string {
  return (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;
}

export function redisServerVersion(): string {
  return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? 'unknown';
}
