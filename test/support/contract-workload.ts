import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobDocument } from '../../functions/api/job-document.js';
import { eventually } from './original-worker.js';
import { deleteQueues, openTestChannel, uniqueName } from './rabbitmq.js';
import { reply, type Script, startScriptedWorkers } from './scripted-workers.js';
import { type ServeProcess, spawnServe } from './serve-process.js';

/*
 * Workers that break the contract, at volume, while serve is killed with SIGKILL and restarted: a
 * share of the replies is poisonous (nested 100,000 levels deep, or of an unknown type), a share of
 * the requests meets a worker that hands every delivery back (NACK with requeue, forever), and one
 * step queue is full (x-max-length 1, reject-publish) with a slow worker draining it.
 */

export interface ContractWorkloadOptions {
  jobs: number;
  kills: number;
  /** Share of jobs whose worker replies with a poisonous body. @default 0.01 */
  poisoned?: number;
  /** Share of jobs whose worker NACKs every delivery. @default 0.01 */
  rejected?: number;
  /** Share of jobs whose step goes to the full queue. @default 0.01 */
  squeezed?: number;
}

export interface ContractFigures {
  jobs: number;
  kills: number;
  completed: number;
  poisonedFailed: number;
  rejectedFailed: number;
  squeezedCompleted: number;
  wrong: string[];
  /** Deliveries of rejected requests more than 5 s after their job ended (must be 0). */
  lateDeliveries: number;
  /** The most deliveries one rejected request had. */
  mostDeliveries: number;
  seconds: number;
}

type Kind = 'good' | 'poisoned' | 'rejected' | 'squeezed';

const POISON_DEPTH = 100_000;

export async function runContractWorkload(options: ContractWorkloadOptions): Promise<ContractFigures> {
  const started = Date.now();
  const suffix = uniqueName('contract');
  const q = (name: string) => `${name}-${suffix}`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-contract-'));
  await writeFile(
    join(dir, 'workflows.yaml'),
    `workflows:
  - name: contract
    steps:
      - { name: work, queue: ${q('work')}, timeout: 3s, retries: 2 }
      - { name: finish, queue: ${q('finish')}, depends: [ work ] }
  - name: squeezed
    steps:
      - { name: narrow, queue: ${q('narrow')} }
`,
  );
  const inspector = await openTestChannel();
  await inspector.channel.assertQueue(q('narrow'), {
    durable: true,
    arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
  });

  const kinds = new Map<string, Kind>();
  const draw = (index: number): Kind => {
    const share = (value: number | undefined, fallback: number) =>
      Math.round(options.jobs * (value ?? fallback));
    const poisoned = share(options.poisoned, 0.01);
    const rejected = share(options.rejected, 0.01);
    const squeezed = share(options.squeezed, 0.01);
    if (index < poisoned) return 'poisoned';
    if (index < poisoned + rejected) return 'rejected';
    if (index < poisoned + rejected + squeezed) return 'squeezed';
    return 'good';
  };
  const jobs = Array.from({ length: options.jobs }, (_, index) => ({
    id: crypto.randomUUID(),
    n: index,
    kind: draw(index),
  })).sort(() => Math.random() - 0.5);
  for (const job of jobs) kinds.set(job.id, job.kind);
  const kindOf = (correlationId: string): Kind => kinds.get(correlationId.split(':')[0] as string) ?? 'good';

  const scripts: Record<string, Script> = {
    [q('work')]: ({ correlationId, input }) => {
      const kind = kindOf(correlationId);
      if (kind === 'rejected') return 'nack';
      if (kind === 'poisoned') {
        return Number(input.n) % 2 === 0
          ? [{ body: `${'['.repeat(POISON_DEPTH)}${']'.repeat(POISON_DEPTH)}` }]
          : [{ body: '{"error":"disk full"}', type: 'Error' as never }];
      }
      return [reply({ ...input, worked: Number(input.n) * 2 })];
    },
    [q('finish')]: ({ input }) => [reply({ n: input.n, done: Number(input.worked) + 1 })],
    [q('narrow')]: ({ input }) => [reply({ n: input.n, squeezed: true })],
  };
  const workers = await startScriptedWorkers(scripts, {
    prefetch: 50,
    connectionName: `switchyard-test-contract-workers-${suffix}`,
    declared: [q('narrow')],
  });
  const args = [
    '--config',
    join(dir, 'workflows.yaml'),
    '--db',
    join(dir, 'switchyard.db'),
    '--reply-queue',
    q('replies'),
    '--request-ttl',
    '5s',
  ];
  let serve: ServeProcess | undefined;
  const endedAt = new Map<string, number>();
  try {
    serve = await spawnServe(args);
    const submit = (job: (typeof jobs)[number]) =>
      eventually(
        async () => {
          const workflow = job.kind === 'squeezed' ? 'squeezed' : 'contract';
          const response = await fetch(`${serve?.url}/api/workflow/${workflow}?id=${job.id}`, {
            method: 'POST',
            body: JSON.stringify({ n: job.n }),
          }).catch(() => undefined);
          return response?.status === 201 || response?.status === 200;
        },
        120_000,
        100,
      );
    const chunk = Math.ceil(jobs.length / (options.kills + 1));
    for (let round = 0; round <= options.kills; round++) {
      await Promise.all(jobs.slice(round * chunk, (round + 1) * chunk).map(submit));
      if (round === options.kills) break;
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1200));
      await serve.kill('SIGKILL');
      serve = await spawnServe(args);
    }
    const documents = new Map<string, JobDocument>();
    await eventually(
      async () => {
        for (const job of jobs) {
          if (documents.has(job.id)) continue;
          const response = await fetch(`${serve?.url}/api/job/${job.id}`).catch(() => undefined);
          if (!response?.ok) return false;
          const document = (await response.json()) as JobDocument;
          if (document.status === 'running' || document.status === 'waiting' || document.status === 'pending')
            return false;
          documents.set(job.id, document);
          endedAt.set(job.id, Date.parse(document.endedAt ?? document.updatedAt));
        }
        return true;
      },
      scaledSettle(options.jobs),
      500,
    );
    // Rejected requests must stop circulating: nothing of them may arrive 5 s (the TTL) after their job ended.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const figures: ContractFigures = {
      jobs: jobs.length,
      kills: options.kills,
      completed: 0,
      poisonedFailed: 0,
      rejectedFailed: 0,
      squeezedCompleted: 0,
      wrong: [],
      lateDeliveries: 0,
      mostDeliveries: 0,
      seconds: 0,
    };
    for (const job of jobs) {
      const document = documents.get(job.id) as JobDocument;
      const message = document.error?.message ?? '';
      if (job.kind === 'good') {
        if (document.status === 'completed' && document.result?.done === job.n * 2 + 1) figures.completed++;
        else
          figures.wrong.push(
            `${job.id} good: ${document.status} ${message} ${JSON.stringify(document.result)}`,
          );
      } else if (job.kind === 'squeezed') {
        if (document.status === 'completed' && document.result?.squeezed === true)
          figures.squeezedCompleted++;
        else figures.wrong.push(`${job.id} squeezed: ${document.status} ${message}`);
      } else if (job.kind === 'poisoned') {
        const why = job.n % 2 === 0 ? 'nested more than 64 levels deep' : 'unknown reply type "Error"';
        if (document.status === 'failed' && message.includes(why)) figures.poisonedFailed++;
        else figures.wrong.push(`${job.id} poisoned: ${document.status} ${message}`);
      } else {
        if (document.status === 'failed' && message.includes('no reply within')) figures.rejectedFailed++;
        else figures.wrong.push(`${job.id} rejected: ${document.status} ${message}`);
      }
    }
    const deliveriesOf = new Map<string, number>();
    for (const delivery of workers.deliveries) {
      const jobId = delivery.correlationId.split(':')[0] as string;
      if (kinds.get(jobId) !== 'rejected') continue;
      deliveriesOf.set(delivery.correlationId, (deliveriesOf.get(delivery.correlationId) ?? 0) + 1);
      if (delivery.at > (endedAt.get(jobId) ?? Number.POSITIVE_INFINITY) + 5_500) figures.lateDeliveries++;
    }
    figures.mostDeliveries = Math.max(0, ...deliveriesOf.values());
    figures.seconds = Math.round((Date.now() - started) / 1000);
    return figures;
  } finally {
    await serve?.kill('SIGTERM').catch(() => null);
    await workers.stop();
    await inspector.model.close().catch(() => {});
    await deleteQueues([q('work'), q('finish'), q('narrow'), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** How long the jobs may take to end after the last kill: longer for more jobs. */
function scaledSettle(jobs: number): number {
  return Math.max(120_000, jobs * 60);
}
