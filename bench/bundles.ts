import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type BundleSettings, esbuildOptions } from '../infra/bundling.js';
import { REPO_ROOT } from '../infra/paths.js';
import type { BusKind } from '../infra/settings.js';
import { spread } from './stats.js';

/*
 * `npm run bench:bundles`: the Lambda bundles of each handler per bus, as the stack builds them, against
 * the bundles of a commit before the per-bus split (both buses in every bundle, source maps shipped and
 * read with --enable-source-maps), and with -c tracing=true. Reports each bundle's size and the CPU time a
 * fresh Node process takes to import it (the module-loading part of a cold start), the median of
 * several runs, all variants alternating in one run. Prints markdown; `--write` also replaces the
 * section between the bundles markers of BENCHMARKS.md.
 *
 *   BENCH_BUNDLE_RUNS=9            imports of each bundle
 *   BENCH_BUNDLES_BEFORE=587aa06   the commit bundled as "before"
 */

const HANDLERS: Record<BusKind, string[]> = {
  sqs: ['api', 'replies-sqs', 'timers', 'dead-letters', 'register-workflows'],
  rabbitmq: ['api', 'replies-mq', 'timers', 'register-workflows'],
};
const runs = Number(process.env.BENCH_BUNDLE_RUNS ?? 9);
const beforeCommit = process.env.BENCH_BUNDLES_BEFORE ?? '587aa06';
const write = process.argv.includes('--write');

interface Variant {
  name: string;
  /** The repository tree the handlers are bundled from. */
  root: string;
  settings: (bus: BusKind) => BundleSettings;
  /** The esbuild `define`s of the variant (the before tree had none). */
  noDefines?: boolean;
  nodeOptions: string[];
}

interface Case {
  variant: string;
  bus: BusKind;
  handler: string;
  file: string;
  bytes: number;
  mapBytes: number;
  nodeOptions: string[];
  importMs: number[];
}

/** The handler sources of `commit`, beside this repository's node_modules, to bundle as they were. */
function checkOut(commit: string, into: string): string {
  const root = join(into, `tree-${commit}`);
  mkdirSync(root, { recursive: true });
  const archive = execFileSync(
    'git',
    ['-C', REPO_ROOT, 'archive', commit, 'engine', 'functions', 'tsconfig.json', 'package.json'],
    { maxBuffer: 1024 * 1024 * 1024 },
  );
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  // Built by `npm run build`, not committed: the same dashboard in both trees.
  const assets = join('functions', 'dashboard', 'dashboard-assets.ts');
  copyFileSync(join(REPO_ROOT, assets), join(root, assets));
  return root;
}

async function bundle(variant: Variant, bus: BusKind, handler: string, outDir: string): Promise<Case> {
  const settings = variant.settings(bus);
  const options = esbuildOptions(join(variant.root, 'functions', 'handlers', `${handler}.ts`), settings);
  const dir = join(outDir, variant.name, bus, handler);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.mjs');
  await build({
    ...options,
    ...(variant.noDefines ? { define: {} } : {}),
    absWorkingDir: variant.root,
    outfile: file,
    write: true,
  });
  const map = `${file}.map`;
  let mapBytes = 0;
  try {
    mapBytes = statSync(map).size;
  } catch {
    mapBytes = 0;
  }
  return {
    variant: variant.name,
    bus,
    handler,
    file,
    bytes: statSync(file).size,
    mapBytes,
    nodeOptions: variant.nodeOptions,
    importMs: [],
  };
}

/**
 * The CPU time (user + system, ms) a fresh Node process spends importing the bundle: what a cold start
 * loads before the handler runs. CPU time rather than the wall clock: on a shared machine the wall clock
 * measures the neighbours; a Lambda sandbox has its CPU to itself, where the two are about the same.
 */
function importOnce(bundleCase: Case): number {
  const script =
    'const start = process.cpuUsage(); await import(process.env.BUNDLE_FILE); const used = process.cpuUsage(start); process.stdout.write(String((used.user + used.system) / 1000));';
  const result = spawnSync(
    process.execPath,
    [...bundleCase.nodeOptions, '--input-type=module', '-e', script],
    {
      env: { PATH: process.env.PATH, BUNDLE_FILE: bundleCase.file, AWS_REGION: 'us-east-1' },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`importing ${bundleCase.file} failed: ${result.stderr}`);
  return Number(result.stdout);
}

const kib = (bytes: number): string =>
  `${(bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 0 })} KiB`;
const ms = (values: number[]): string => {
  const s = spread(values);
  return `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
};

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'switchyard-bundles-'));
  try {
    const beforeRoot = checkOut(beforeCommit, work);
    const variants: Variant[] = [
      {
        name: 'before',
        root: beforeRoot,
        settings: (bus) => ({ bus, tracing: false, sourceMaps: true }),
        noDefines: true,
        nodeOptions: ['--enable-source-maps'],
      },
      {
        name: 'now',
        root: REPO_ROOT,
        settings: (bus) => ({ bus, tracing: false, sourceMaps: false }),
        nodeOptions: [],
      },
      {
        name: 'tracing',
        root: REPO_ROOT,
        settings: (bus) => ({ bus, tracing: true, sourceMaps: false }),
        nodeOptions: [],
      },
    ];
    const cases: Case[] = [];
    for (const bus of ['sqs', 'rabbitmq'] as const)
      for (const handler of HANDLERS[bus])
        for (const variant of variants) cases.push(await bundle(variant, bus, handler, join(work, 'out')));
    // Round after round, every case once a round: the machine's noise falls on all of them alike.
    for (let round = 0; round < runs; round++) for (const c of cases) c.importMs.push(importOnce(c));
    const markdown = render(cases);
    console.log(markdown);
    if (write) writeSection(markdown);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function render(cases: Case[]): string {
  const find = (variant: string, bus: BusKind, handler: string): Case => {
    const found = cases.find((c) => c.variant === variant && c.bus === bus && c.handler === handler);
    if (!found) throw new Error(`no case ${variant} ${bus} ${handler}`);
    return found;
  };
  const commit = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} at ${commit} with \`npm run bench:bundles\` (${runs} imports of each bundle, all variants alternating) on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.versions.node}. _before_: the bundles of ${beforeCommit} (both buses in every bundle, its source map shipped and read with \`--enable-source-maps\`); _now_: the stack's bundles (one bus, no source map); _tracing_: now with \`-c tracing=true\`. Import: the CPU time (user + system, V8's background compiler threads included) a fresh \`node\` spends importing the bundle, median (min–max).`,
    '',
    '| bus | function | before: size (+ map) | now: size | tracing: size | before: import | now: import | tracing: import |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const bus of ['sqs', 'rabbitmq'] as const) {
    for (const handler of HANDLERS[bus]) {
      const before = find('before', bus, handler);
      const now = find('now', bus, handler);
      const traced = find('tracing', bus, handler);
      lines.push(
        `| ${bus} | ${handler} | ${kib(before.bytes)} (+ ${kib(before.mapBytes)}) | ${kib(now.bytes)} | ${kib(traced.bytes)} | ${ms(before.importMs)} | ${ms(now.importMs)} | ${ms(traced.importMs)} |`,
      );
    }
  }
  return lines.join('\n');
}

const BEGIN = '<!-- bench:bundles:begin -->';
const END = '<!-- bench:bundles:end -->';

function writeSection(markdown: string): void {
  const path = join(REPO_ROOT, 'BENCHMARKS.md');
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`BENCHMARKS.md has no ${BEGIN} … ${END} section`);
  writeFileSync(path, `${text.slice(0, start + BEGIN.length)}\n${markdown}\n${text.slice(end)}`);
}

await main();
