import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { benchAwsCost } from '../../bench/aws-cost.js';
import { runFloorOnce } from '../../bench/broker-floor.js';
import { benchBullmq } from '../../bench/bullmq.js';
import { benchEngine } from '../../bench/engine.js';
import { benchLocal } from '../../bench/local.js';
import { describeMachine } from '../../bench/machine.js';
import { runCoreOnce } from '../../bench/manager-core-run.js';
import { judgeTargets, renderFigures } from '../../bench/render.js';
import type { BenchResults, SectionRun } from '../../bench/results-file.js';

/*
 * Keeps `npm run bench` from rotting: every harness once, on toy sizes (the figures themselves are
 * meaningless here; that the harness completes and reports consistent counts is the point).
 */

function redisServerInstalled(): void {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      "the BullMQ harness needs Debian's redis-server: apt-get install -y redis-server (it starts its own, on a free port)",
    );
  }
}

const results: BenchResults = {};
const machine = describeMachine();
const section = (): SectionRun => ({
  measuredAt: new Date().toISOString(),
  runs: 1,
  loadAverage: { start: 0, end: 0 },
  machine,
  command: 'vitest run test/bench',
});

describe('Benchmark harness (toy sizes)', () => {
  it('runs the engine alone', async () => {
    // Act
    // (12,000 children: more than one slice of the engine's 10,000.)
    const figures = await benchEngine(1, [12_000]);

    // Assess
    expect(figures.chainPerSecond[0]).toBeGreaterThan(0);
    expect(figures.fanOut[12_000]?.seconds[0]).toBeGreaterThan(0);
    results.engine = { ...section(), figures };
  });

  it('runs diamonds and a fan-out through serve, durably, and reads its figures', async () => {
    // Act
    const figures = await benchLocal({
      runs: 1,
      diamondJobs: [10],
      fanOutItems: [10],
      synchronous: ['FULL'],
      lowLoad: { chains: 1, warmChains: 1, steps: 5 },
    });

    // Assess
    const [diamond, fanOut] = figures.runs;
    expect(diamond).toMatchObject({ workload: 'diamond', size: 10, steps: 40 });
    expect(fanOut).toMatchObject({ workload: 'fan-out', size: 10, steps: 12 });
    for (const run of figures.runs) {
      expect(run.wallSeconds).toBeGreaterThan(0);
      expect(run.overheadMs['0.5']).toBeGreaterThanOrEqual(0);
      expect(run.servePeakRssMb).toBeGreaterThan(10);
      // A toy workload can take less than one clock tick (10 ms) of another process's CPU, so those
      // are read, not necessarily above zero; the driver's own is counted in microseconds.
      for (const process of ['serve', 'workers', 'rabbitmq']) {
        expect(run.cpuSeconds[process], `${run.workload}: ${process}'s CPU seconds`).toBeGreaterThanOrEqual(
          0,
        );
      }
      expect(run.cpuSeconds.driver).toBeGreaterThan(0);
    }
    // The broker's floor ran beside the diamond case: the same diamonds, with no store behind them.
    expect(figures.floorRuns).toEqual([
      expect.objectContaining({ workload: 'diamond', size: 10, steps: 40, wallSeconds: expect.any(Number) }),
    ]);
    // Less than a clock tick of CPU each, possibly: read, not necessarily above zero (see above).
    expect(figures.floorRuns?.[0]?.cpuSeconds).toMatchObject({
      manager: expect.any(Number),
      workers: expect.any(Number),
      rabbitmq: expect.any(Number),
    });
    expect(figures.floorRuns?.[0]?.stepsPerSecond).toBeGreaterThan(0);
    // And serve's engine and store alone, with the diamonds stored in a SQLite file of their own.
    expect(figures.coreRuns).toEqual([
      expect.objectContaining({ workload: 'diamond', size: 10, synchronous: 'FULL', steps: 40 }),
    ]);
    const [core] = figures.coreRuns ?? [];
    expect(core?.stepsPerSecond).toBeGreaterThan(0);
    expect(core?.cpuUsPerStep).toBeGreaterThan(0);
    expect(core?.peakRssMb).toBeGreaterThan(10);
    // And the low-load chain, with the disk's sync measured beside it.
    expect(figures.lowLoadRuns).toEqual([expect.objectContaining({ chains: 1, steps: 5 })]);
    const [lowLoad] = figures.lowLoadRuns ?? [];
    expect(lowLoad?.overheadMs['0.5']).toBeGreaterThan(0);
    expect(lowLoad?.disk.sqliteCommitMs.median).toBeGreaterThan(0);
    // serve's own write transactions over the same chains, from its /metrics.
    expect(lowLoad?.serveWriteMs?.['0.5']).toBeGreaterThan(0);
    expect(lowLoad?.disk.samples).toBeGreaterThan(0);
    results.local = { ...section(), figures };
  }, 120_000);

  it("runs the manager's core alone on 100-step chains, from a checkout's sources, as bench/before-after.ts does", async () => {
    const core = await runCoreOnce(1, 1, 'FULL', { shape: 'chain', root: process.cwd() });
    expect(core).toMatchObject({ workload: 'chain', size: 1, steps: 100 });
    expect(core.cpuUsPerStep).toBeGreaterThan(0);
    expect(core.peakRssMb).toBeGreaterThan(10);
  }, 120_000);

  it("runs the broker's floor on rabbitmq-client, the AMQP client it is compared with", async () => {
    // Act
    const run = await runFloorOnce(10, 5, 'rabbitmq-client');

    // Assess
    expect(run).toMatchObject({ workload: 'diamond', size: 10, steps: 40 });
    expect(run.wallSeconds).toBeGreaterThan(0);
    expect(run.cpuSeconds.manager).toBeGreaterThanOrEqual(0);
  });

  it('runs the same workloads as BullMQ flows on its own redis-server', async () => {
    // Prepare
    redisServerInstalled();

    // Act
    const figures = await benchBullmq({
      runs: 1,
      diamondJobs: [10],
      fanOutItems: [10],
      persistence: ['none'],
    });

    // Assess
    expect(figures.runs.map((run) => [run.workload, run.steps])).toEqual([
      ['diamond', 40],
      ['fan-out', 12],
    ]);
    for (const run of figures.runs) expect(run.stepsPerSecond).toBeGreaterThan(0);
    results.bullmq = { ...section(), figures };
  }, 120_000);

  it('prices the simulated deployment, with the same write units per child at two fan-out sizes', async () => {
    // Act
    const figures = await benchAwsCost({
      diamondJobs: 2,
      fanOutItems: [5, 15],
      quietMs: 600,
      timeInvocations: false,
    });

    // Assess
    const [diamond, small, large] = figures.cases;
    expect(diamond).toMatchObject({ workload: 'diamond', steps: 8 });
    expect(diamond?.lambda.api.count).toBe(2);
    for (const c of figures.cases) {
      expect(c.perStep.writeUnits).toBeGreaterThan(0);
      expect(c.perStep.usdPerMillion.orchestration).toBeGreaterThan(0);
      expect(c.counts.workers?.sqsCalls.SendMessage).toBe(c.steps);
    }
    expect(figures.perChild?.writeUnits).toBeGreaterThan(0);
    // Retention by TTL: a diamond's end commit gives every item its expiry; a fan-out's tree is stamped.
    expect(diamond?.counts.retention?.writeUnits).toBe(0);
    expect(small?.counts.retention?.writeUnits).toBeGreaterThan(5);
    for (const c of figures.cases) {
      expect(c.logBytes).toBeGreaterThan(0);
      expect(c.perStep.usdPerMillion.logs).toBeGreaterThan(0);
    }
    expect(large?.stepFunctions.standardTransitions).toBe(18);
    expect(small?.size).toBe(5);
    results.aws = { ...section(), figures };
  }, 120_000);

  it('renders every section and judges every target', () => {
    // Act
    const text = renderFigures(results);
    const targets = judgeTargets(results);

    // Assess
    for (const heading of [
      'The engine alone',
      'Local and durable',
      "The broker's floor",
      "The manager's core alone",
      'BullMQ flows',
      'On AWS, modelled',
    ])
      expect(text).toContain(heading);
    expect(targets.length).toBeGreaterThanOrEqual(6);
    for (const row of targets) expect(typeof row.met).toBe('boolean');
  });
});
