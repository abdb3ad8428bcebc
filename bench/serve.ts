import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type BenchChild, freePort, spawnChild, waitFor } from './child.js';

const ROOT = join(import.meta.dirname, '..');
/**
 * `BENCH_SERVE_ROOT`: another checkout whose built serve to run (its `bin/switchyard.js` and bundle),
 * for before/after runs alternating in one benchmark process. Its own `npm run build:cli` first.
 */
const serveBin = (): string => join(process.env.BENCH_SERVE_ROOT ?? ROOT, 'bin/switchyard.js');
/** `BENCH_SERVE_NODE`: the Node.js that runs serve, when not the benchmark's own (another version). */
const serveNode = (): string => process.env.BENCH_SERVE_NODE ?? process.execPath;
const ENTRY = join(ROOT, 'bench/serve-entry.ts');

export type Synchronous = 'FULL' | 'NORMAL';

export interface BenchServeOptions {
  config: string;
  db: string;
  replyQueue: string;
  synchronous: Synchronous;
  /**
   * Write V8 CPU profiles here when serve exits (`node --cpu-prof`): one a thread (tsx's loader
   * runs on one of its own), named CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; the main
   * thread is thread 0.
   */
  cpuProfileDir?: string;
  /** Sample serve's heap (bench/heap-sampler.ts) into this folder; runs serve-entry.ts. */
  heapProfileDir?: string;
  heapMode?: 'live' | 'allocations';
  /** serve's `--max-fan-out`. @default 100000 */
  maxFanOut?: number;
  /**
   * serve's `--max-reply` when above its default (1 MiB): the listing reply of a million items is
   * 6.9 MB, and the step after the fan-in gets a result from each child.
   */
  maxReplyBytes?: number;
}

export interface BenchServe extends BenchChild {
  url: string;
  /** How serve was started, for the report. */
  command: string;
}

let cliHasSynchronousFlag: boolean | undefined;

/** Whether `switchyard serve` takes `--synchronous` (asked once). */
function cliTakesSynchronous(): boolean {
  cliHasSynchronousFlag ??= execFileSync(process.execPath, [serveBin(), 'serve', '--help'], {
    encoding: 'utf8',
  }).includes('--synchronous');
  return cliHasSynchronousFlag;
}

/**
 * `switchyard serve` as its own process on a fresh SQLite file and its own reply queue, logging
 * warnings only; resolves once /healthz answers. FULL (serve's default) runs `bin/switchyard.js`;
 * NORMAL does too when the command line has `--synchronous`, else bench/serve-entry.ts.
 */
export async function startBenchServe(options: BenchServeOptions): Promise<BenchServe> {
  const port = await freePort();
  const maxFanOut = options.maxFanOut ?? 100_000;
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const viaCli = !options.heapProfileDir && (options.synchronous === 'FULL' || cliTakesSynchronous());
  const args = viaCli
    ? [
        ...profile,
        serveBin(),
        'serve',
        '--config',
        options.config,
        '--db',
        options.db,
        '--reply-queue',
        options.replyQueue,
        '--max-fan-out',
        String(maxFanOut),
        '--port',
        String(port),
        ...(options.synchronous === 'NORMAL' ? ['--synchronous', 'NORMAL'] : []),
        ...(options.maxReplyBytes ? ['--max-reply', String(options.maxReplyBytes)] : []),
      ]
    : [...profile, '--import', 'tsx', ENTRY];
  const child = await spawnChild({
    name: 'serve',
    command: serveNode(),
    args,
    cwd: ROOT,
    env: {
      LOG_LEVEL: 'warn',
      // The bundle the benchmark built, or a failure: never the sources edited since.
      SWITCHYARD_FROM_SOURCE: '0',
      BENCH_CONFIG: options.config,
      BENCH_DB: options.db,
      BENCH_REPLY_QUEUE: options.replyQueue,
      BENCH_PORT: String(port),
      BENCH_MAX_FAN_OUT: String(maxFanOut),
      ...(options.maxReplyBytes ? { BENCH_MAX_REPLY_BYTES: String(options.maxReplyBytes) } : {}),
      BENCH_SYNCHRONOUS: options.synchronous,
      ...(options.heapProfileDir
        ? { BENCH_HEAP_PROFILE_DIR: options.heapProfileDir, BENCH_HEAP_MODE: options.heapMode ?? 'live' }
        : {}),
    },
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'serve to answer /healthz',
      async () => {
        if (child.child.exitCode !== null) throw new Error(`serve exited:\n${child.output()}`);
        const response = await fetch(`${url}/healthz`);
        await response.arrayBuffer();
        return response.ok ? true : undefined;
      },
      60_000,
      50,
    );
  } catch (error) {
    await child.stop(1_000);
    throw new Error(`${(error as Error).message}\n${child.output()}`);
  }
  const command = viaCli
    ? `node bin/switchyard.js serve --db <fresh file> --reply-queue <unique> --max-fan-out ${maxFanOut}${options.synchronous === 'NORMAL' ? ' --synchronous NORMAL' : ''}`
    : `node --import tsx bench/serve-entry.ts (startServe with synchronous ${options.synchronous})`;
  return { ...child, url, command };
}
