import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, loadWorkflows, type StepRequest, type TimerScheduler } from '../engine/index.js';
import { SqliteStore } from '../functions/adapters/sqlite/store.js';
import { Manager } from '../functions/manager/manager.js';
import { CHAIN, CHAIN_STEPS, chainWorkflowYaml } from './low-load.js';
import { benchQueues, benchWorkflowsYaml, DIAMOND, DIAMOND_STEPS, SUBMIT_CONCURRENCY } from './workloads.js';

/*
 * The manager's core alone: serve's engine and SQLite store (a fresh file, group commits, the
 * outbox) running diamonds in one process, with no broker and no HTTP. Requests are kept in memory
 * and answered `{}` in batches, as serve's reply consumer hands them over; jobs are started 20 at a
 * time, as the driver submits them. The other half of the broker's floor: what serve's own work
 * costs a step, durably, when nothing else shares the machine.
 *
 * Environment: BENCH_JOBS (measured diamonds), BENCH_WARM_JOBS, BENCH_SYNCHRONOUS (FULL or NORMAL),
 * BENCH_IN_FLIGHT (diamonds running at once), BENCH_REPLY_BATCH (replies per batch). Prints
 * `done <JSON>` (wall seconds, CPU seconds, peak RSS) once every measured diamond has completed.
 *
 * BENCH_CORE_SHAPE=chain: the low-load case's work instead (bench/low-load.ts): 100-step chains one
 * after the other, each request answered alone, so that every step is a transaction and a sync of
 * its own; BENCH_JOBS and BENCH_WARM_JOBS count chains (default 40 and 20). Prints the CPU a step.
 */

const env = process.env;
const chains = env.BENCH_CORE_SHAPE === 'chain';
const measuredJobs = Number(env.BENCH_JOBS ?? (chains ? 40 : 10_000));
const warmJobs = Number(env.BENCH_WARM_JOBS ?? (chains ? 20 : 3_000));
const synchronous = env.BENCH_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL';
const inFlight = Number(env.BENCH_IN_FLIGHT ?? 200);
const replyBatch = Number(env.BENCH_REPLY_BATCH ?? 50);

export interface CoreFigures {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  /** BENCH_CORE_SHAPE=chain: the CPU a step, µs, user and system apart. */
  cpuUsPerStep?: { user: number; system: number };
}

/** Requests the manager sent, in order; answered from the front. */
const sent: StepRequest[] = [];
const bus: Bus = {
  async send(requests) {
    for (const request of requests) sent.push(request);
  },
  async ensureQueues() {},
  async ping() {},
  async close() {},
};
const timers: TimerScheduler = { async arm() {}, async disarm() {} };

const dir = await mkdtemp(join(tmpdir(), 'switchyard-core-'));
const store = SqliteStore.open(join(dir, 'core.db'), { synchronous });
const manager = new Manager({ store, bus, timers });
const yaml = chains ? chainWorkflowYaml('core-chain') : benchWorkflowsYaml(benchQueues('core-'));
for (const workflow of loadWorkflows(yaml).workflows) await manager.registerWorkflow(workflow);

/** Runs `count` chains one after the other, each request answered alone. */
async function runChains(count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    await manager.startJob({ workflow: CHAIN, id: randomUUID() });
    await manager.drain();
    for (let request = sent.shift(); request; request = sent.shift()) {
      await manager.handleReplies([
        { correlationId: request.correlationId, body: '{}', attempt: request.attempt },
      ]);
      await manager.drain();
    }
  }
}

/** Runs `jobs` diamonds to completion, at most `inFlight` at a time. */
async function runDiamonds(jobs: number): Promise<void> {
  let started = 0;
  let repliedSteps = 0;
  while (repliedSteps < jobs * DIAMOND_STEPS) {
    const running = started - Math.floor(repliedSteps / DIAMOND_STEPS);
    const starts: Promise<unknown>[] = [];
    while (started < jobs && running + starts.length < inFlight && starts.length < SUBMIT_CONCURRENCY) {
      starts.push(manager.startJob({ workflow: DIAMOND, id: randomUUID() }));
      started++;
    }
    await Promise.all(starts);
    await manager.drain();
    const batch = sent.splice(0, replyBatch);
    if (!batch.length && started >= jobs)
      throw new Error('no request to answer, yet diamonds are unfinished');
    await manager.handleReplies(
      batch.map((request) => ({
        correlationId: request.correlationId,
        body: '{}',
        attempt: request.attempt,
      })),
    );
    await manager.drain();
    repliedSteps += batch.length;
  }
}

try {
  const run = chains ? runChains : runDiamonds;
  await run(warmJobs);
  const cpuBefore = process.cpuUsage();
  const startedAt = process.hrtime.bigint();
  await run(measuredJobs);
  const wallSeconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const counts = await store.countJobs(chains ? CHAIN : DIAMOND);
  if (counts.completed !== warmJobs + measuredJobs) {
    throw new Error(`${counts.completed} of ${warmJobs + measuredJobs} jobs completed`);
  }
  const figures: CoreFigures = {
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
  if (chains) {
    const steps = measuredJobs * CHAIN_STEPS;
    figures.cpuUsPerStep = { user: cpu.user / steps, system: cpu.system / steps };
  }
  process.stdout.write(`done ${JSON.stringify(figures)}\n`);
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
