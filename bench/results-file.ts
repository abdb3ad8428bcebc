import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AwsFigures } from './aws-cost.js';
import type { BullmqFigures } from './bullmq.js';
import type { EngineFigures } from './engine.js';
import type { LocalFigures } from './local.js';
import type { Machine } from './machine.js';

/** When and how a section was measured. */
export interface SectionRun {
  measuredAt: string;
  runs: number;
  /** 1-minute load average when the section started and ended. */
  loadAverage: { start: number; end: number };
  machine: Machine;
  command: string;
}

/**
 * bench/results/latest.json: the raw figures of the last run of each section (a run of some
 * sections keeps the others' last figures, each with its own date, machine and load).
 */
export interface BenchResults {
  engine?: SectionRun & { figures: EngineFigures };
  local?: SectionRun & { figures: LocalFigures };
  bullmq?: SectionRun & { figures: BullmqFigures };
  aws?: SectionRun & { figures: AwsFigures };
}

export const RESULTS_DIR = join(import.meta.dirname, 'results');
export const LATEST = join(RESULTS_DIR, 'latest.json');

export async function readResults(file = LATEST): Promise<BenchResults> {
  if (!existsSync(file)) return {};
  return JSON.parse(await readFile(file, 'utf8')) as BenchResults;
}

/**
 * Writes the run's figures: as the latest (merged into `latest.json` with the sections this run did
 * not measure, and a dated copy of that), or, for a trial run, to a dated file of their own only, so
 * that a partial or diagnostic run never replaces what BENCHMARKS.md is rendered from. Returns the
 * figures written and the files they went to.
 */
export async function writeResults(
  results: BenchResults,
  options: { asLatest: boolean; dir?: string },
): Promise<{ written: BenchResults; files: string[] }> {
  const dir = options.dir ?? RESULTS_DIR;
  const latest = join(dir, 'latest.json');
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const written = options.asLatest ? { ...(await readResults(latest)), ...results } : results;
  const text = `${JSON.stringify(written, null, 2)}\n`;
  const dated = join(dir, options.asLatest ? `${stamp}.json` : `${stamp}-trial.json`);
  const files = options.asLatest ? [latest, dated] : [dated];
  for (const file of files) await writeFile(file, text);
  return { written, files };
}
