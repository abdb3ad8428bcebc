import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobDocument } from '../../functions/api/job-document.js';
import { eventually } from './original-worker.js';
import { deleteQueues, uniqueName } from './rabbitmq.js';
import { reply, startScriptedWorkers } from './scripted-workers.js';
import { type ServeProcess, spawnServe } from './serve-process.js';

export interface ResendFigures {
  fanOuts: number;
  children: number;
  kills: number;
  /** Distinct requests the workers took. */
  requests: number;
  /** Deliveries of a request already taken: re-sent after a crash, or redelivered. */
  duplicates: number;
  duplicateShare: number;
  completed: number;
  seconds: number;
}

/**
 * Large fan-outs while serve is SIGKILLed in the middle of sending their requests: how many
 * requests reach the workers twice (issue: 48% before the outbox recorded confirms as they came).
 */
export async function runFanOutResends(options: {
  fanOuts: number;
  children: number;
  kills: number;
}): Promise<ResendFigures> {
  const started = Date.now();
  const suffix = uniqueName('resends');
  const q = (name: string) => `${name}-${suffix}`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-resends-'));
  await writeFile(
    join(dir, 'workflows.yaml'),
    `workflows:
  - name: big
    steps:
      - { name: each, task: per-item }
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - { name: echo, queue: ${q('echo')} }
`,
  );
  const workers = await startScriptedWorkers(
    { [q('echo')]: ({ input }) => [reply({ item: input.item })] },
    {
      prefetch: 200,
      connectionName: `switchyard-test-resends-${suffix}`,
    },
  );
  const args = [
    '--config',
    join(dir, 'workflows.yaml'),
    '--db',
    join(dir, 'switchyard.db'),
    '--reply-queue',
    q('replies'),
  ];
  let serve: ServeProcess | undefined;
  try {
    serve = await spawnServe(args);
    const ids: string[] = [];
    for (let f = 0; f < options.fanOuts; f++) {
      const items = Array.from({ length: options.children }, (_, i) => i);
      const response = await fetch(`${serve.url}/api/workflow/big`, {
        method: 'POST',
        body: JSON.stringify({ items }),
      });
      ids.push(((await response.json()) as { id: string }).id);
    }
    for (let kill = 0; kill < options.kills; kill++) {
      // Kill while requests go out: soon after a start or restart, when the outbox is full.
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 800));
      await serve.kill('SIGKILL');
      serve = await spawnServe(args);
    }
    let completed = 0;
    await eventually(
      async () => {
        completed = 0;
        for (const id of ids) {
          const document = (await (await fetch(`${serve?.url}/api/job/${id}`)).json()) as JobDocument;
          if (document.status === 'completed') completed++;
        }
        return completed === ids.length;
      },
      300_000,
      500,
    );
    const requests = new Set(
      workers.deliveries.map((delivery) => `${delivery.correlationId}#${delivery.attempt}`),
    ).size;
    const duplicates = workers.duplicates();
    return {
      fanOuts: options.fanOuts,
      children: options.children,
      kills: options.kills,
      requests,
      duplicates,
      duplicateShare: Math.round((duplicates / requests) * 1000) / 1000,
      completed,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await serve?.kill('SIGTERM').catch(() => null);
    await workers.stop();
    await deleteQueues([q('echo'), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  }
}
