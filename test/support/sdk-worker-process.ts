import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from './rabbitmq.js';

const MAIN = join(import.meta.dirname, 'sdk-worker-main.ts');

export interface WorkerEvent {
  event: 'ready' | 'received';
  correlationId?: string;
  attempt?: number;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SdkWorkerProcess {
  child: ChildProcess;
  events: WorkerEvent[];
  /** What it has written to stderr (its log) so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<WorkerExit>;
  /** Waits for an event that `matches`. */
  waitFor(what: string, matches: (event: WorkerEvent) => boolean, timeoutMs?: number): Promise<WorkerEvent>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnOptions {
  /** Wait until it consumes its queue. @default true */
  ready?: boolean;
  /** More environment: AMQP_URL, WORKER_SHUTDOWN_TIMEOUT_MS, WORKER_SQS_ENDPOINT, WORKER_QUEUE_PREFIX. */
  env?: Record<string, string>;
}

/** Starts an SDK worker (test/support/sdk-worker-main.ts) as a process, by default waiting until it consumes. */
export async function spawnSdkWorker(
  queue: string,
  mode: 'hold' | 'echo',
  options: SpawnOptions = {},
): Promise<SdkWorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, WORKER_QUEUE: queue, WORKER_MODE: mode, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: WorkerEvent[] = [];
  let stderr = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as WorkerEvent);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<WorkerExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor: SdkWorkerProcess['waitFor'] = (what, matches, timeoutMs = 20_000) =>
    eventually(
      `${what} (worker ${child.pid}, stderr: ${stderr.slice(-500)})`,
      () => events.find(matches),
      timeoutMs,
    );
  if (options.ready ?? true) await waitFor('the worker to start', (event) => event.event === 'ready', 30_000);
  return {
    child,
    events,
    stderr: () => stderr,
    exited,
    waitFor,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
