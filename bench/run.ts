import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { benchAwsCost } from './aws-cost.js';
import { benchBullmq } from './bullmq.js';
import { benchEngine } from './engine.js';
import { benchLocal } from './local.js';
import { describeMachine } from './machine.js';
import { loadAverage } from './proc.js';
import { benchQuick, renderQuick } from './quick.js';
import type { RedisPersistence } from './redis.js';
import { renderFigures } from './render.js';
import { updateReport } from './report.js';
import { type BenchResults, RESULTS_DIR, type SectionRun, writeResults } from './results-file.js';
import type { Synchronous } from './serve.js';
import { filesChangedSince } from './source-tree.js';

/*
 * `npm run bench`: every section in one process tree, several runs each; prints the figures as
 * markdown, writes the raw figures to bench/results/latest.json, and rewrites the figures section
 * of BENCHMARKS.md. Never part of `npm test`.
 *
 * `npm run bench -- --quick`: serve's durable steps/s against the broker's floor on this machine, in
 * under a minute (bench/quick.ts); nothing else runs and no file is written.
 *
 * `npm run bench -- --million` (or BENCH_MILLION=1): the local section also runs one fan-out of
 * 1,000,000 children (SQLite FULL) after its other cases: 3 to 10 minutes more on 2 cores.
 *
 * Environment (flags `--runs=N` and `--only=a,b` do the same as BENCH_RUNS and BENCH_ONLY):
 *   BENCH_RUNS=3                     runs of every case
 *   BENCH_ONLY=engine,local,bullmq,aws
 *   BENCH_DIAMONDS=1000,10000        diamond jobs (local and BullMQ)
 *   BENCH_FANOUTS=1000,10000,100000  fan-out items (local and BullMQ)
 *   BENCH_SYNCHRONOUS=FULL,NORMAL    serve's SQLite synchronous levels
 *   BENCH_REDIS=none,everysec,always Redis persistence for BullMQ
 *   BENCH_AWS_DIAMONDS=100           diamond jobs through the AWS simulation
 *   BENCH_AWS_FANOUTS=100,1000       fan-out children through the AWS simulation
 *   BENCH_PROFILE=0                  skip the extra, uncounted runs under the profilers (each local
 *                                    case under the CPU profiler; the largest fan-out sampling the heap)
 *   BENCH_LOW_LOAD_RUNS=3            runs of the low-load chain (one 100-step chain at a time); 0: none
 *   BENCH_REPORT=0                   a trial: leave BENCHMARKS.md and latest.json alone (the figures
 *                                    go to a dated `-trial.json` file only)
 */

const flags = Object.fromEntries(
  process.argv
    .slice(2)
    .map((arg) => arg.match(/^--([a-z-]+)=(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => [m[1] as string, m[2] as string]),
);
const env = process.env;
const list = (value: string | undefined, fallback: string): string[] =>
  (value ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const numbers = (value: string | undefined, fallback: string): number[] => list(value, fallback).map(Number);

const runs = Number(flags.runs ?? env.BENCH_RUNS ?? 3);
const only = new Set(list(flags.only ?? env.BENCH_ONLY, 'engine,local,bullmq,aws'));
const diamonds = numbers(env.BENCH_DIAMONDS, '1000,10000');
const fanOuts = numbers(env.BENCH_FANOUTS, '1000,10000,100000');
const synchronous = list(env.BENCH_SYNCHRONOUS, 'FULL,NORMAL') as Synchronous[];
const redis = list(env.BENCH_REDIS, 'none,everysec,always') as RedisPersistence[];
const awsDiamonds = Number(env.BENCH_AWS_DIAMONDS ?? 100);
const awsFanOuts = numbers(env.BENCH_AWS_FANOUTS, '100,1000');

const command = [
  ...Object.entries(env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value}`),
  'npm run bench',
  ...process.argv.slice(2),
].join(' ');

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const startedAt = Date.now();
const machine = describeMachine();
const results: BenchResults = {};

async function section<T>(
  name: string,
  measure: () => Promise<T>,
): Promise<(SectionRun & { figures: T }) | undefined> {
  if (!only.has(name)) return undefined;
  log(`${name}: starting (load average ${loadAverage()})`);
  const start = loadAverage();
  const measuredAt = new Date().toISOString();
  const figures = await measure();
  log(`${name}: done`);
  return { measuredAt, runs, loadAverage: { start, end: loadAverage() }, machine, command, figures };
}

log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, Node ${machine.node}`);
if (process.argv.includes('--quick')) {
  const figures = await benchQuick(log);
  process.stdout.write(`${renderQuick(figures, machine.cores)}\n`);
  log(`done in ${Math.round((Date.now() - startedAt) / 1000)} s`);
  process.exit(0);
}
results.engine = await section('engine', () => benchEngine(runs));
const profileDir = env.BENCH_PROFILE === '0' ? undefined : join(RESULTS_DIR, 'profiles');
if (profileDir) await mkdir(profileDir, { recursive: true });
results.local = await section('local', () =>
  benchLocal({
    runs,
    diamondJobs: diamonds,
    fanOutItems: fanOuts,
    synchronous,
    cpuProfileDir: profileDir,
    heapProfileDir: profileDir,
    hugeFanOuts: process.argv.includes('--million') || env.BENCH_MILLION === '1' ? [1_000_000] : [],
    lowLoadRuns: env.BENCH_LOW_LOAD_RUNS === undefined ? undefined : Number(env.BENCH_LOW_LOAD_RUNS),
    log,
  }),
);
results.bullmq = await section('bullmq', () =>
  benchBullmq({ runs, diamondJobs: diamonds, fanOutItems: fanOuts, persistence: redis, log }),
);
results.aws = await section('aws', () =>
  benchAwsCost({ diamondJobs: awsDiamonds, fanOutItems: awsFanOuts, log }),
);

for (const key of Object.keys(results) as (keyof BenchResults)[]) if (!results[key]) delete results[key];
const edited = filesChangedSince(startedAt);
if (edited.length) {
  log(
    `files changed while the run went on (${edited.join(', ')}): the later cases may have measured other code than the earlier ones, so the figures are kept as a trial only`,
  );
}
const asLatest = env.BENCH_REPORT !== '0' && !edited.length;
const { written, files } = await writeResults(results, { asLatest });
process.stdout.write(`${renderFigures(written)}\n`);
let reported = true;
if (asLatest) {
  try {
    await updateReport(written);
    log('BENCHMARKS.md figures updated');
  } catch (error) {
    log((error as Error).message);
    reported = false;
  }
}
log(`raw figures: ${files.join(', ')}`);
// Emulators and clients may keep handles open; everything this run started has been stopped.
process.exit(reported ? 0 : 1);
