import { describe, expect, it } from 'vitest';
import type { FloorRun } from '../../bench/broker-floor.js';
import type { BullmqRun } from '../../bench/bullmq.js';
import type { LocalFigures, LocalRun } from '../../bench/local.js';
import type { LowLoadRun } from '../../bench/low-load.js';
import { judgeTargets } from '../../bench/render.js';
import type { BenchResults, SectionRun } from '../../bench/results-file.js';

/*
 * The targets of issue 34 that the figures are judged against: the low-load overhead against the
 * disk's commit; the million-child fan-out against 150 s, 500 MB and the 10,000 case's time a child;
 * diamonds against 80% of the broker's floor and serve's CPU a step against 80 µs; the 10,000-child
 * fan-out against 1.0 s; serve against BullMQ with Redis in memory only. Synthetic figures: what is
 * judged, not what was measured.
 */

/** A section's run around its figures (date, machine and load do not count in the targets). */
const sectionRun = <F>(figures: F): SectionRun & { figures: F } => ({
  measuredAt: '2026-11-28T00:00:00.000Z',
  runs: 1,
  loadAverage: { start: 0, end: 0 },
  machine: {} as SectionRun['machine'],
  command: 'test',
  figures,
});

const section = (figures: LocalFigures): BenchResults => ({ local: sectionRun(figures) });

const fanOut = (size: number, wallSeconds: number, servePeakRssMb: number): LocalRun => ({
  workload: 'fan-out',
  size,
  synchronous: 'FULL',
  steps: size + 2,
  wallSeconds,
  stepsPerSecond: (size + 2) / wallSeconds,
  overheadMs: {},
  meanReplyBatch: 1,
  servePeakRssMb,
  cpuSeconds: {},
  loadAverage: { before: 0, after: 0 },
});

const diamond = (size: number, stepsPerSecond: number, serveCpuSeconds: number): LocalRun => ({
  ...fanOut(size, (size * 4) / stepsPerSecond, 180),
  workload: 'diamond',
  steps: size * 4,
  stepsPerSecond,
  cpuSeconds: { serve: serveCpuSeconds },
});

const floor = (size: number, stepsPerSecond: number): FloorRun => ({
  workload: 'diamond',
  size,
  steps: size * 4,
  wallSeconds: (size * 4) / stepsPerSecond,
  stepsPerSecond,
  cpuSeconds: {},
  loadAverage: { before: 0, after: 0 },
});

const bullmq = (size: number, persistence: BullmqRun['persistence'], stepsPerSecond: number): BullmqRun => ({
  workload: 'diamond',
  size,
  persistence,
  steps: size * 4,
  wallSeconds: (size * 4) / stepsPerSecond,
  stepsPerSecond,
  redisPeakRssMb: 10,
  workersPeakRssMb: 100,
  cpuSeconds: {},
  loadAverage: { before: 0, after: 0 },
});

const lowLoad = (p50: number, commit: number): LowLoadRun => ({
  chains: 5,
  steps: 500,
  overheadMs: { '0.5': p50, '0.99': p50 * 4 },
  overheadCount: 495,
  msPerStep: p50 * 2,
  serveCpuUsPerStep: 1000,
  disk: {
    sqliteCommitMs: { min: commit / 2, median: commit, max: commit * 10, p99: commit * 8 },
    fdatasyncMs: { min: 0.1, median: 0.3, max: 3, p99: 2 },
    samples: 240,
  },
  loadAverage: 0,
});

function row(results: BenchResults, starts: string) {
  const found = judgeTargets(results).find((r) => r.target.startsWith(starts));
  expect(found, `a target starting "${starts}"`).toBeDefined();
  return found as NonNullable<typeof found>;
}

describe('the targets of issue 34', () => {
  it('judges the low-load overhead against the SQLite commit measured in the same runs', () => {
    // Act
    const met = row(section({ serveCommand: '', runs: [], lowLoadRuns: [lowLoad(1.4, 0.6)] }), 'low load');
    const missed = row(section({ serveCommand: '', runs: [], lowLoadRuns: [lowLoad(2.1, 0.6)] }), 'low load');

    // Assess
    expect(met.met).toBe(true);
    expect(met.figure).toContain('p50 1.40 ms');
    expect(missed.met).toBe(false);
  });

  it('judges a million children on time, peak RSS and time a child against the 10,000 case', () => {
    // Prepare
    const tenK = fanOut(10_000, 1.2, 180);
    const figures = (huge: LocalRun): LocalFigures => ({
      serveCommand: '',
      runs: [tenK],
      hugeFanOutRuns: [huge],
    });

    // Act
    const met = row(section(figures(fanOut(1_000_000, 140, 450))), 'fan-out × 1,000,000');
    const slowPerChild = row(section(figures(fanOut(1_000_000, 149, 450))), 'fan-out × 1,000,000');
    const tooBig = row(section(figures(fanOut(1_000_000, 120, 510))), 'fan-out × 1,000,000');

    // Assess
    expect(met.met).toBe(true);
    expect(met.figure).toContain('140.0 s, 450 MB');
    // 149 µs a child against 120: 124%, within 25%.
    expect(slowPerChild.met).toBe(true);
    expect(tooBig.met).toBe(false);
    const slower = row(
      section({
        serveCommand: '',
        runs: [fanOut(10_000, 1.0, 180)],
        hugeFanOutRuns: [fanOut(1_000_000, 130, 400)],
      }),
      'fan-out × 1,000,000',
    );
    // 130 µs a child against 100: 130%.
    expect(slower.met).toBe(false);
  });

  it("judges diamonds against 80% of the broker's floor and serve's CPU a step against 80 µs", () => {
    // Prepare: 10,000 diamonds (40,000 steps) at 8,500 steps/s against a floor of 10,000; serve's
    // CPU 3.0 s (75 µs a step). 1,000 diamonds at 7,000 against 10,000, 0.4 s (100 µs a step).
    const results = section({
      serveCommand: '',
      runs: [diamond(10_000, 8_500, 3.0), diamond(1_000, 7_000, 0.4)],
      floorRuns: [floor(10_000, 10_000), floor(1_000, 10_000)],
    });

    // Act
    const nearFloor = row(results, "diamond × 10,000 ≥ 80% of the broker's floor");
    const farFromFloor = row(results, "diamond × 1,000 ≥ 80% of the broker's floor");
    const lean = row(results, "serve's CPU a diamond step ≤ 80 µs, diamond × 10,000");
    const heavy = row(results, "serve's CPU a diamond step ≤ 80 µs, diamond × 1,000");

    // Assess
    expect(nearFloor).toMatchObject({ met: true, figure: '85%: 8,500 against 10,000 steps/s' });
    expect(farFromFloor.met).toBe(false);
    expect(lean).toMatchObject({ met: true, figure: expect.stringContaining('75 µs') });
    expect(heavy).toMatchObject({ met: false, figure: expect.stringContaining('100 µs') });
  });

  it('judges the 10,000-child fan-out against 1.0 s', () => {
    const fast = row(
      section({ serveCommand: '', runs: [fanOut(10_000, 0.98, 180)] }),
      'fan-out × 10,000 ≤ 1.0 s',
    );
    const slow = row(
      section({ serveCommand: '', runs: [fanOut(10_000, 1.19, 180)] }),
      'fan-out × 10,000 ≤ 1.0 s',
    );

    expect(fast).toMatchObject({ met: true, figure: '0.98 s' });
    expect(slow.met).toBe(false);
  });

  it('judges serve against BullMQ with Redis in memory only, beside the same-durability comparison', () => {
    // Prepare: ahead of Redis `always`, behind Redis in memory only.
    const results: BenchResults = {
      ...section({ serveCommand: '', runs: [diamond(10_000, 7_000, 3.5)] }),
      bullmq: sectionRun({
        bullmqVersion: '6',
        redisVersion: '7',
        runs: [bullmq(10_000, 'always', 6_000), bullmq(10_000, 'none', 8_000)],
      }),
    };

    // Act
    const durable = row(results, 'faster than BullMQ flows: diamond × 10,000');
    const inMemory = row(results, 'ahead of BullMQ with Redis in memory only: diamond × 10,000 jobs');

    // Assess
    expect(durable.met).toBe(true);
    expect(inMemory).toMatchObject({ met: false, figure: '7,000 vs 8,000 steps/s = 0.88×' });
  });
});
