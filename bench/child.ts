import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A process the benchmark started: its pid, what it wrote, and a clean stop. */
export interface BenchChild {
  name: string;
  pid: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Resolves once this line (or a line containing it) is written; else once spawned. */
  readyLine?: string;
  readyTimeoutMs?: number;
}

export async function spawnChild(options: SpawnOptions): Promise<BenchChild> {
  const child = spawn(options.command, options.args, {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  if (options.readyLine) {
    const line = options.readyLine;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`${options.name} not ready within ${options.readyTimeoutMs ?? 60_000} ms:\n${log}`),
          ),
        options.readyTimeoutMs ?? 60_000,
      );
      const check = () => {
        if (log.includes(line)) {
          clearTimeout(timer);
          child.stdout?.off('data', check);
          resolve();
        }
      };
      child.stdout?.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${options.name} exited (${code ?? signal}) before it was ready:\n${log}`));
      });
    });
  }
  if (child.pid === undefined) throw new Error(`${options.name} did not start:\n${log}`);
  return {
    name: options.name,
    pid: child.pid,
    child,
    output: () => log,
    stop: async (graceMs = 15_000) => {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

const ROOT = join(import.meta.dirname, '..');

/** One of the benchmark's own scripts (`bench/<script>`) in a process of its own, run by tsx from the repo root. */
export function spawnBenchScript(
  script: string,
  options: Omit<SpawnOptions, 'command' | 'args' | 'cwd'> & {
    /** The checkout whose script runs, from its sources (default this one). */
    root?: string;
  },
): Promise<BenchChild> {
  const { root = ROOT, ...spawnOptions } = options;
  return spawnChild({
    ...spawnOptions,
    command: process.execPath,
    args: ['--import', 'tsx', join(root, 'bench', script)],
    cwd: root,
  });
}

/** A TCP port the OS says is free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value that is not undefined; throws `what` after the deadline. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError}` : ''}`,
      );
    await delay(everyMs);
  }
}

/**
 * `work`, unless `running` exits first: then it rejects at once, naming the exit, rather than leave
 * the run to poll a dead process until its timeout (an hour and more for the largest fan-out).
 */
export async function whileRunning<T>(running: BenchChild, work: Promise<T>): Promise<T> {
  const { child } = running;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
    fail(new Error(`${running.name} exited (${code ?? signal}) during the run`));
  let fail: (error: Error) => void = () => {};
  const exited = new Promise<never>((_, reject) => {
    fail = reject;
  });
  if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
  else child.once('exit', onExit);
  try {
    return await Promise.race([work, exited]);
  } finally {
    child.off('exit', onExit);
    // When the exit won the race, the work's own end (a failed poll, most likely) is of no interest.
    work.catch(() => {});
  }
}
