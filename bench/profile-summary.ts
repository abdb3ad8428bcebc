import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/*
 * A V8 CPU profile (`node --cpu-prof`) summarised: where the process spent its time during a window,
 * by self time, per function and per area (a file of this repository, an npm package, a Node
 * built-in, or V8's own: garbage collection, idle, program).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  ms: number;
  /** Share of the window's busy (non-idle) time. */
  share: number;
}

export interface ProfileSummary {
  label: string;
  file: string;
  windowMs: number;
  busyMs: number;
  idleMs: number;
  byArea: ProfileEntry[];
  byFunction: ProfileEntry[];
  /**
   * This repository's functions by the time spent in them and in what they called (each sample
   * counted once per function on its stack): where self time is spread over library and native
   * frames, or over callees V8 inlined, this says whose call it was (absent in older results).
   */
  byFunctionWithCallees?: ProfileEntry[];
}

const ROOT = join(import.meta.dirname, '..');

const pathOf = (url: string): string => (url.startsWith('file://') ? url.slice(7) : url);

/** The path, from the repository's root, of a frame of its own code (its sources or the bundle built from them). */
function ownFile(url: string): string | undefined {
  const path = pathOf(url);
  return path.startsWith(ROOT) && !path.includes('/node_modules/') ? relative(ROOT, path) : undefined;
}

function area(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const packageMatch = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (packageMatch) return `npm: ${packageMatch[1]}`;
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[0]}`;
  return ownFile(url) ?? pathOf(url);
}

function top(totals: Map<string, number>, busyMs: number, count: number): ProfileEntry[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, ms]) => ({
      name,
      ms: Math.round(ms),
      share: busyMs ? Math.round((ms / busyMs) * 1000) / 10 : 0,
    }));
}

/** Now on the clock V8 stamps profiles with (CLOCK_MONOTONIC, as process.hrtime), in microseconds. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Summarises `file`, keeping the samples taken between `fromUs` and `toUs` (monotonicUs() of any
 * process on this machine: V8's sample times and process.hrtime share CLOCK_MONOTONIC): the
 * workload, not the start-up.
 */
export async function summariseProfile(
  file: string,
  label: string,
  window: { fromUs: number; toUs: number } = { fromUs: 0, toUs: Number.POSITIVE_INFINITY },
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const withCallees = new Map<string, number>();
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let atUs = profile.startTime;
  let idleMs = 0;
  let windowMs = 0;
  profile.samples.forEach((id, i) => {
    const deltaUs = profile.timeDeltas[i] ?? 0;
    atUs += deltaUs;
    if (atUs < window.fromUs || atUs > window.toUs) return;
    const ms = deltaUs / 1000;
    windowMs += ms;
    const frame = nodes.get(id)?.callFrame;
    if (!frame) return;
    if (frame.functionName === '(idle)') {
      idleMs += ms;
      return;
    }
    const where = area(frame.url, frame.functionName);
    byArea.set(where, (byArea.get(where) ?? 0) + ms);
    // Files of this repository run transformed by tsx: their line numbers are not the source's.
    const line = frame.url.startsWith('node:') || where.startsWith('npm:') ? `:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'} ${where}${line}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const caller = nodes.get(at)?.callFrame;
      // A closure's time shows under the named function that made the call.
      const file = caller?.functionName ? ownFile(caller.url) : undefined;
      if (caller && file) onStack.add(`${caller.functionName} ${file}`);
    }
    for (const caller of onStack) withCallees.set(caller, (withCallees.get(caller) ?? 0) + ms);
  });
  const busyMs = windowMs - idleMs;
  return {
    label,
    file,
    windowMs: Math.round(windowMs),
    busyMs: Math.round(busyMs),
    idleMs: Math.round(idleMs),
    byArea: top(byArea, busyMs, 15),
    byFunction: top(byFunction, busyMs, 20),
    byFunctionWithCallees: top(withCallees, busyMs, 20),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file] = process.argv.slice(2);
  if (!file) throw new Error('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile>');
  console.log(JSON.stringify(await summariseProfile(file, file), null, 2));
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

export interface HeapSummary {
  label: string;
  file: string;
  /** `live`: objects live when the heap was fullest; `allocations`: everything allocated over the run. */
  mode: 'live' | 'allocations';
  /** serve's peak RSS in the run. */
  rssMb: number;
  /** Bytes the sampling profiler accounts (live, or allocated over the run), MB (JS heap objects only). */
  sampledMb: number;
  /** The highest of each process.memoryUsage() figure over the run, MB: rss, heapTotal, heapUsed, external, arrayBuffers. */
  memoryMb?: Record<string, number>;
  /** Where the bytes were allocated, by area and by function. */
  byArea: HeapEntry[];
  byFunction: HeapEntry[];
}

export interface HeapEntry {
  name: string;
  mb: number;
  /** Share of the sampled bytes. */
  share: number;
}

/** Summarises a sampling heap profile (heap-sampler.ts): memory by where it was allocated. */
export async function summariseHeapProfile(
  file: string,
  label: string,
  rssMb: number,
  memory: Record<string, number> | undefined,
  mode: HeapSummary['mode'],
): Promise<HeapSummary> {
  const head = (JSON.parse(await readFile(file, 'utf8')) as { head: HeapNode }).head;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: HeapNode) => {
    if (node.selfSize) {
      const frame = node.callFrame;
      const where = area(frame.url, frame.functionName);
      const mbSize = node.selfSize / 1024 / 1024;
      total += mbSize;
      byArea.set(where, (byArea.get(where) ?? 0) + mbSize);
      const name = `${frame.functionName || '(anonymous)'} ${where}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + mbSize);
    }
    for (const child of node.children) visit(child);
  };
  visit(head);
  const entries = (totals: Map<string, number>) =>
    [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(
        ([name, mb]): HeapEntry => ({
          name,
          mb: Math.round(mb * 10) / 10,
          share: total ? Math.round((mb / total) * 1000) / 10 : 0,
        }),
      );
  return {
    label,
    file,
    mode,
    rssMb,
    sampledMb: Math.round(total * 10) / 10,
    memoryMb: memory
      ? Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, Math.round(v / 1024 / 1024)]))
      : undefined,
    byArea: entries(byArea),
    byFunction: entries(byFunction),
  };
}
