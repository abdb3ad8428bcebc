import { randomUUID } from 'node:crypto';
import { type BenchChild, spawnBenchScript, waitFor } from './child.js';
import { CpuWindow, loadAverage, pidsNamed } from './proc.js';
import { AMQP_URL, deleteQueues, startWorkers } from './rabbitmq-side.js';
import { benchQueues, DIAMOND_STEPS } from './workloads.js';

/*
 * The broker's floor, beside each diamond case: the same diamonds, echo workers and messages driven
 * by bench/floor-manager.ts, a manager with no store, no engine and no HTTP. No manager speaking the
 * protocol over this broker on this machine can beat it, so it says how much of a diamond's cost is
 * the broker's and how much serve's.
 */

/** Diamonds the floor manager keeps running: its rate is flat from 100 to 1,000 (20 waits on round trips). */
export const FLOOR_IN_FLIGHT = 100;

/**
 * The AMQP client the floor manager speaks through: serve's own (amqplib, through RabbitMqBus), or
 * `rabbitmq-client` (bench/floor-manager-rabbitmq-client.ts), to compare the two (bench/amqp-clients.ts).
 */
export type FloorClient = 'amqplib' | 'rabbitmq-client';

const FLOOR_SCRIPTS: Record<FloorClient, string> = {
  amqplib: 'floor-manager.ts',
  'rabbitmq-client': 'floor-manager-rabbitmq-client.ts',
};

export interface FloorRun {
  workload: 'diamond';
  size: number;
  steps: number;
  wallSeconds: number;
  stepsPerSecond: number;
  /** CPU seconds over the workload, by process: manager, workers, rabbitmq, driver, others. */
  cpuSeconds: Record<string, number>;
  loadAverage: { before: number; after: number };
}

export async function runFloorOnce(
  jobs: number,
  warmJobs: number,
  client: FloorClient = 'amqplib',
): Promise<FloorRun> {
  const prefix = `bench-floor-${randomUUID().slice(0, 8)}-`;
  const queues = benchQueues(prefix);
  let workers: BenchChild | undefined;
  let manager: BenchChild | undefined;
  try {
    workers = await startWorkers(prefix);
    manager = await spawnBenchScript(FLOOR_SCRIPTS[client], {
      name: 'floor-manager',
      env: {
        AMQP_URL,
        BENCH_PREFIX: prefix,
        BENCH_JOBS: String(jobs),
        BENCH_WARM_JOBS: String(warmJobs),
        BENCH_IN_FLIGHT: String(FLOOR_IN_FLIGHT),
      },
      readyLine: 'warm',
      readyTimeoutMs: 120_000,
    });
    const running = manager;
    const before = loadAverage();
    const cpu = new CpuWindow({
      manager: [running.pid],
      workers: [workers.pid],
      rabbitmq: pidsNamed('beam.smp'),
    });
    running.child.kill('SIGUSR2');
    const wallSeconds = await waitFor(
      'the floor manager to finish its diamonds',
      () => {
        const done = running.output().match(/^done ([\d.]+)$/m);
        return done ? Number(done[1]) : undefined;
      },
      Math.max(120_000, jobs * 30),
      10,
    );
    const { wallSeconds: _window, ...cpuSeconds } = cpu.stop();
    const steps = jobs * DIAMOND_STEPS;
    return {
      workload: 'diamond',
      size: jobs,
      steps,
      wallSeconds,
      stepsPerSecond: steps / wallSeconds,
      cpuSeconds,
      loadAverage: { before, after: loadAverage() },
    };
  } catch (error) {
    throw new Error(
      `the broker's floor (${client}), ${jobs} diamonds, failed: ${(error as Error).message}\n` +
        `the manager said:\n${manager?.output().slice(-4_000) ?? '(not started)'}\nthe workers said:\n${workers?.output().slice(-2_000) ?? ''}`,
    );
  } finally {
    await manager?.stop();
    await workers?.stop();
    await deleteQueues([...Object.values(queues), `${prefix}replies`]).catch(() => {});
  }
}
