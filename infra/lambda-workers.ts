import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { SqsBus } from './constructs/sqs-bus.js';
import { WorkerFunction } from './constructs/worker-function.js';
import { REPO_ROOT } from './paths.js';
import type { SwitchyardSettings } from './settings.js';

/** The export of a worker module that serves step queue `queue`: `book-split` → `bookSplit`. */
export function workerExportName(queue: string): string {
  return queue.replace(/[-_]+([A-Za-z0-9])/g, (_, next: string) => next.toUpperCase()).replace(/[-_]/g, '');
}

/**
 * Checks that the worker module exports a handler for every step queue, by reading its text (the
 * synth does not run it): `export const bookSplit`, `export function bookSplit` or `export { bookSplit }`.
 */
export function checkWorkerExports(entry: string, source: string, stepQueues: readonly string[]): void {
  const exported = new Set<string>();
  for (const match of source.matchAll(
    /export\s+(?:const|let|var|async\s+function|function)\s+([A-Za-z_$][\w$]*)/g,
  )) {
    exported.add(match[1] as string);
  }
  for (const match of source.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const part of (match[1] as string).split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .at(-1)
        ?.trim();
      if (name) exported.add(name);
    }
  }
  const missing = stepQueues.filter((queue) => !exported.has(workerExportName(queue)));
  if (missing.length > 0) {
    throw new Error(
      `-c workers=lambda: ${entry} exports no handler for ${missing
        .map((queue) => `step queue "${queue}" (export ${workerExportName(queue)})`)
        .join(', ')}; export a lambdaWorker(...) under each name, or give -c workerEntry=FILE`,
    );
  }
}

/** Files a worker module reads at run time, beside its bundle, by entry (from the repository root). */
const ENTRY_FILES: Record<string, string[]> = {
  'examples/word-counts/lambda-workers.ts': ['examples/word-counts/Alice_in_Wonderland.txt'],
};

/** With `-c workers=lambda`: the worker module exists and serves every step queue (checked before anything is bundled). */
export function checkLambdaWorkers(settings: SwitchyardSettings, stepQueues: readonly string[]): void {
  const { workers } = settings;
  if (workers.kind !== 'lambda') return;
  const entry = resolve(workers.entry);
  if (!existsSync(entry)) throw new Error(`-c workerEntry=${workers.entry}: no such file (${entry})`);
  checkWorkerExports(workers.entry, readFileSync(entry, 'utf8'), stepQueues);
}

/**
 * `-c workers=lambda`: one WorkerFunction per step queue deployed with the stack, its handler the
 * entry's export named after the queue (checkLambdaWorkers made sure there is one). Queues of
 * workflows registered later get none: their workers run elsewhere, or the stack is deployed again
 * with the workflows file.
 */
export function addLambdaWorkers(
  scope: Construct,
  settings: SwitchyardSettings,
  bus: SqsBus,
): WorkerFunction[] {
  const { workers } = settings;
  const entry = resolve(workers.entry);
  const queues = [...bus.stepQueues.keys()];
  return queues.map(
    (queue) =>
      new WorkerFunction(scope, `Worker-${queue}`, {
        stepQueue: bus.stepQueues.get(queue) as sqs.Queue,
        replyQueue: bus.replyQueue,
        entry,
        handler: workerExportName(queue),
        description: `Switchyard worker of the step queue ${queue} (${workerExportName(queue)} in ${workers.entry})`,
        timeout: workers.timeout,
        memorySize: workers.memorySize,
        maxConcurrency: workers.maxConcurrency,
        logRetention: settings.logRetentionDays as logs.RetentionDays,
        removalPolicy: settings.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        tracing: settings.tracing,
        files: ENTRY_FILES[relative(REPO_ROOT, entry)] ?? [],
      }),
  );
}
