import { spawn } from 'node:child_process';
import type { CliRun } from './cli-process.js';

export interface RunCommandOptions {
  cwd?: string;
  /** The whole environment of the command (not merged with this process's). */
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

/** Runs a command to its end, keeping its output; kills it (and says so) after `timeoutMs`. */
export function runCommand(
  command: string,
  args: string[],
  options: RunCommandOptions = {},
): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // A process group of its own, so that the timeout ends what the command started too.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
    }, options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/**
 * This process's environment without the `npm_*` variables that `npm test` sets: an npm started in
 * another folder would otherwise take this project's (npm_config_local_prefix) as its own.
 */
export function environmentOutsideNpm(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^npm_/i.test(name)) env[name] = value;
  return { ...env, ...extra };
}

export interface StartedCommand {
  child: ReturnType<typeof spawn>;
  /** Its exit code; null when a signal ended it. */
  exited: Promise<number | null>;
  /** Everything it wrote, stdout and stderr together, for a failing test's message. */
  output(): string;
}

/** Starts a long-running command (a worker), keeping what it writes. */
export function startCommand(
  command: string,
  args: string[],
  options: Pick<RunCommandOptions, 'cwd' | 'env'> = {},
): StartedCommand {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}
