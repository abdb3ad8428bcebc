#!/usr/bin/env node
// Runs the bundle that `npm run build:cli` makes (plain JavaScript: less memory, faster start) while it
// is up to date with the sources it was built from; otherwise the TypeScript sources, which tsx
// compiles as they load (no build step needed). SWITCHYARD_FROM_SOURCE=1 always runs the sources;
// SWITCHYARD_FROM_SOURCE=0 runs the bundle or, when it is not up to date, fails.
import { readFileSync, statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { requireNode } from './require-node.js';

// Before anything loads better-sqlite3, which crashes an older Node without a word.
requireNode();

if (process.argv[2] === 'serve') {
  boundYoungGeneration();
  // serve is long-running and its live heap jumps when a large fan-out creates its children: grow
  // the heap by half of what is live after each full collection, not by V8's default factor (up to
  // 4x), which let a 100,000-child fan-out's heap reach twice what it holds.
  setFlagsFromString('--heap-growing-percent=50');
}

/**
 * Node 22 and later size V8's young generation from the machine's memory: on 24 GiB it grew to
 * 134 MB, and serve's peak RSS by 80–90 MB for no measurable speed (BENCHMARKS.md). The semi-space
 * size is read only as V8 starts, so serve starts again, in this same process (execve: same pid,
 * same signals), with Node 20's 16 MB, unless the caller chose a size. Where execve is missing
 * (Windows), serve runs with V8's default.
 */
function boundYoungGeneration() {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((flag) => flag.startsWith('--max-semi-space-size'))) return;
  if (typeof process.execve !== 'function' || process.platform === 'win32') return;
  process.execve(process.execPath, [
    process.execPath,
    '--max-semi-space-size=16',
    ...process.execArgv,
    ...process.argv.slice(1),
  ]);
}

const root = new URL('../', import.meta.url);
const bundle = new URL('dist/cli/switchyard.js', root);

/** Whether the bundle exists and no source it was built from changed since. */
function bundleIsCurrent() {
  try {
    const builtAt = statSync(bundle).mtimeMs;
    const { inputs } = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', root), 'utf8'));
    return inputs.every((input) => statSync(new URL(input, root)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

const fromSource = process.env.SWITCHYARD_FROM_SOURCE;
const useBundle = fromSource !== '1' && bundleIsCurrent();
if (fromSource === '0' && !useBundle) {
  // The bundle was required (benchmarks measure it): running the sources instead would measure
  // something other than what the caller asked for.
  process.stderr.write(
    'switchyard: SWITCHYARD_FROM_SOURCE=0 requires the bundle, and dist/cli/switchyard.js is missing or older than its sources: run npm run build:cli\n',
  );
  process.exit(1);
}
if (useBundle) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../functions/cli/main.ts');
}
