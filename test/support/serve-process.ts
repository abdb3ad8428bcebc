import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '../../bin/switchyard.js');

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote, for a failing test's message. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `switchyard serve` as its own process and resolves once it serves (its "serving" log line).
 * With `maxOpenFiles`, under that limit of descriptors (soft and hard, set by a shell's `ulimit -n`).
 */
export async function spawnServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 30_000,
  { maxOpenFiles }: { maxOpenFiles?: number } = {},
): Promise<ServeProcess> {
  const command = [process.execPath, BIN, 'serve', '--port', '0', ...args];
  const [file, ...rest] =
    maxOpenFiles === undefined
      ? command
      : ['/bin/sh', '-c', `ulimit -n ${maxOpenFiles} && exec "$@"`, 'sh', ...command];
  const child = spawn(file as string, rest, {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not start within ${timeoutMs} ms:\n${log}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('"serving"')) continue;
        try {
          const entry = JSON.parse(line) as { message: string; url?: string };
          if (entry.message === 'serving' && entry.url) {
            clearTimeout(timer);
            resolve(entry.url);
          }
        } catch {
          // a partial line
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before serving:\n${log}`));
    });
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-200_000);
  });
  return {
    url,
    child,
    output: () => log,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
