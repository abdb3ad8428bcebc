import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '../../bin/switchyard.js');

export interface CliRun {
  /** The exit code; null when a signal ended it (a crash, or the timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** It was still running at the deadline and was killed. */
  timedOut: boolean;
  ms: number;
}

/** Runs `switchyard <args>` as its own process; kills it (and says so) after `timeoutMs`. */
export function runCli(args: string[], timeoutMs = 30_000, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/** How a child process ended, for a failing test's message. */
export function describeRun(run: CliRun): string {
  const how = run.timedOut
    ? `still running after ${run.ms} ms (killed)`
    : run.signal
      ? `killed by ${run.signal}`
      : `exit ${run.code}`;
  return `${how}\nstdout: ${run.stdout.slice(0, 1500)}\nstderr: ${run.stderr.slice(0, 1500)}`;
}

export interface RunningCli {
  child: ReturnType<typeof spawn>;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** Stops it (SIGTERM by default) and resolves once it exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `switchyard <args>` and returns at once (for a serve that is expected not to start serving). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
