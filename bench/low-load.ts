import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchChild, spawnBenchScript, waitFor, whileRunning } from './child.js';
import { type DiskSync, type DiskSyncSamples, sampleDiskSync, summariseDiskSync } from './disk-sync.js';
import { getJob, readMetrics, submitJobs, waitUntilIdle } from './http-driver.js';
import { quantilesMs, windowFigures } from './metrics-window.js';
import { CpuWindow, loadAverage } from './proc.js';
import { AMQP_URL, deleteQueues, replyQueueConsumed } from './rabbitmq-side.js';
import { startBenchServe } from './serve.js';

/*
 * Low load: one chain of 100 steps at a time, one echo worker (prefetch 1), nothing else. What a
 * step costs when the manager has nothing else to do: serve's overhead per step (its own histogram,
 * from a reply's arrival to the confirmed send of the request it caused) against the disk's sync
 * time, measured in the same folder in the same run, before each chain and after the last
 * (bench/disk-sync.ts), as the disk's speed moves with what else the machine does. At this load a durable
 * manager can do no better than one commit (a sync) and one publish a step; anything above is
 * waiting: batch windows, timers, pumps.
 */

export const CHAIN = 'bench-chain';
export const CHAIN_STEPS = 100;
/** How often the driver asks whether a measured chain ended (its stored end time is what counts). */
const POLL_MS = 250;
/** Commits and syncs timed before each chain and after the last. */
const DISK_SAMPLES = 40;

export interface LowLoadRun {
  chains: number;
  steps: number;
  /** The manager's overhead per step, ms, by quantile ("0.5", "0.9", "0.99"), from serve's /metrics. */
  overheadMs: Record<string, number>;
  /** Steps the overhead quantiles were read from (the requests replies caused). */
  overheadCount: number;
  /**
   * serve's own write transactions over the chains (`switchyard_store_write_seconds`: BEGIN to the
   * end of COMMIT, the job's row and the outbox written and synced), ms by quantile; absent from a
   * serve that does not time them.
   */
  serveWriteMs?: Record<string, number>;
  /** A chain's wall time over its steps: the whole round trip a step, worker and broker included, ms. */
  msPerStep: number;
  /** serve's CPU a step over the measured chains, µs. */
  serveCpuUsPerStep: number;
  disk: DiskSync;
  loadAverage: number;
}

export function chainWorkflowYaml(queue: string, steps = CHAIN_STEPS): string {
  const lines = [`workflows:\n  - name: ${CHAIN}\n    steps:`];
  for (let n = 1; n <= steps; n++) {
    lines.push(
      `      - name: c${n}\n        queue: ${queue}${n > 1 ? `\n        depends: [c${n - 1}]` : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export interface LowLoadOptions {
  /** Chains measured, one after the other. @default 5 */
  chains?: number;
  /** Chains run before measuring, 5 at a time, so that V8 has compiled the path. @default 30 */
  warmChains?: number;
  steps?: number;
  /** Write serve's CPU profile here (`--cpu-prof`). */
  cpuProfileDir?: string;
}

export async function runLowLoadOnce(options: LowLoadOptions = {}): Promise<LowLoadRun> {
  const chains = options.chains ?? 5;
  const steps = options.steps ?? CHAIN_STEPS;
  const prefix = `bench-chain-${randomUUID().slice(0, 8)}-`;
  const queue = `${prefix}chain`;
  const replyQueue = `${prefix}replies`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-'));
  const config = join(dir, 'workflows.yaml');
  await writeFile(config, chainWorkflowYaml(queue, steps));
  let worker: BenchChild | undefined;
  let serve: Awaited<ReturnType<typeof startBenchServe>> | undefined;
  try {
    worker = await spawnBenchScript('echo-workers.ts', {
      name: 'echo-worker',
      env: { AMQP_URL, BENCH_NOOP_QUEUES: queue, BENCH_PREFETCH: '1' },
      readyLine: 'ready',
    });
    serve = await startBenchServe({
      config,
      db: join(dir, 'bench.db'),
      replyQueue,
      synchronous: 'FULL',
      cpuProfileDir: options.cpuProfileDir,
    });
    await replyQueueConsumed(replyQueue);
    const url = serve.url;
    await submitJobs(serve.url, CHAIN, options.warmChains ?? 30, 5);
    await whileRunning(serve, waitUntilIdle(serve.url, CHAIN, 120_000));
    const load = loadAverage();
    const before = await readMetrics(serve.url);
    const cpu = new CpuWindow({ serve: [serve.pid] });

    let wallMs = 0;
    const disk: DiskSyncSamples = { sqliteCommitMs: [], fdatasyncMs: [] };
    for (let n = 0; n < chains; n++) {
      sampleDiskSync(dir, DISK_SAMPLES, disk);
      const began = Date.now();
      const [id] = await submitJobs(serve.url, CHAIN, 1, 1);
      // Polled seldom: each poll is work for serve's event loop, which a step would wait behind.
      const job = await whileRunning(
        serve,
        waitFor(
          'the chain to end',
          async () => {
            const state = await getJob(url, id as string);
            return state.status === 'running' ? undefined : state;
          },
          120_000,
          POLL_MS,
        ),
      );
      if (job.status !== 'completed') throw new Error(`a chain ended ${job.status}`);
      wallMs += Date.parse(job.endedAt ?? job.updatedAt) - began;
    }
    const cpuSeconds = cpu.stop();

    sampleDiskSync(dir, DISK_SAMPLES, disk);
    const metrics = windowFigures(before, await readMetrics(serve.url));
    return {
      chains,
      steps: chains * steps,
      overheadMs: quantilesMs(metrics.overhead),
      overheadCount: metrics.overheadCount,
      ...(Object.keys(metrics.storeWrite).length ? { serveWriteMs: quantilesMs(metrics.storeWrite) } : {}),
      msPerStep: wallMs / (chains * steps),
      serveCpuUsPerStep: ((cpuSeconds.serve ?? Number.NaN) * 1e6) / (chains * steps),
      disk: summariseDiskSync(disk),
      loadAverage: load,
    };
  } catch (error) {
    throw new Error(
      `the low-load chain failed: ${(error as Error).message}\n` +
        `serve said:\n${serve?.output().slice(-4_000) ?? '(not started)'}\nthe worker said:\n${worker?.output().slice(-2_000) ?? ''}`,
    );
  } finally {
    await serve?.stop();
    await worker?.stop();
    await deleteQueues([queue, replyQueue]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

export function lowLoadLine(run: LowLoadRun): string {
  const f = (ms: number | undefined) => (ms ?? Number.NaN).toFixed(2);
  return (
    `low load (one ${run.steps / run.chains}-step chain at a time, one worker): manager overhead a step ` +
    `p50 ${f(run.overheadMs['0.5'])} ms, p99 ${f(run.overheadMs['0.99'])} ms; ${f(run.msPerStep)} ms a step ` +
    `end to end; the disk's SQLite commit (WAL, FULL) p50 ${f(run.disk.sqliteCommitMs.median)} ms ` +
    `p99 ${f(run.disk.sqliteCommitMs.p99)} ms, fdatasync p50 ${f(run.disk.fdatasyncMs.median)} ms` +
    (run.serveWriteMs ? `, serve's own write transactions p50 ${f(run.serveWriteMs['0.5'])} ms` : '') +
    '; ' +
    `serve ${Math.round(run.serveCpuUsPerStep)} µs CPU a step`
  );
}
