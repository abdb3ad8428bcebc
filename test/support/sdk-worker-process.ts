import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from './rabbitmq.js';

const MAIN = join(import.meta.dirname, 'sdk-worker-main.ts');

export interface WorkerEvent {
  event: 'ready' | 'received';
  correlationId?: string;
  attempt?: number;
}

export interface SdkWorkerProcess {
  child: ChildProcess;
  events: WorkerEvent[];
  /** Waits for an event that `matches`. */
  waitFor(what: string, matches: (event: WorkerEvent) => boolean, timeoutMs?: number): Promise<WorkerEvent>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts an SDK worker (test/support/sdk-worker-main.ts) as a process and waits until it consumes. */
export async function spawnSdkWorker(queue: string, mode: 'hold' | 'echo'): Promise<SdkWorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, WORKER_QUEUE: queue, WORKER_MODE: mode },
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
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitFor: SdkWorkerProcess['waitFor'] = (what, matches, timeoutMs = 20_000) =>
    eventually(
      `${what} (worker ${child.pid}, stderr: ${stderr.slice(-500)})`,
      () => events.find(matches),
      timeoutMs,
    );
  await waitFor('the worker to start', (event) => event.event === 'ready', 30_000);
  return {
    child,
    events,
    waitFor,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
