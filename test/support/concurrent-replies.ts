import fc from 'fast-check';
import {
  type Bus,
  type InboundReply,
  type JobRecord,
  type JsonObject,
  loadWorkflows,
  type StepRequest,
  type Store,
  type TimerScheduler,
} from '../../engine/index.js';
import { MemoryStore } from '../../functions/adapters/memory/store.js';
import { Manager } from '../../functions/manager/manager.js';
import { type LogFields, noMetrics, type Telemetry } from '../../functions/telemetry/telemetry.js';
import { type Shape, toYaml } from './random-workflows.js';

/** How replies reach the handlers: which to take next, which to duplicate, how many handlers at once. */
export interface ConcurrentDelivery {
  order: number[];
  duplicates: boolean[];
  batchSizes: number[];
  /** Batches handled at the same time in each round. */
  parallel: number[];
}

const ROUND_LENGTH = 60;

export const concurrentDeliveryArbitrary: fc.Arbitrary<ConcurrentDelivery> = fc.record({
  order: fc.array(fc.nat(), { minLength: ROUND_LENGTH, maxLength: ROUND_LENGTH }),
  duplicates: fc.array(fc.boolean(), { minLength: ROUND_LENGTH, maxLength: ROUND_LENGTH }),
  batchSizes: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: ROUND_LENGTH, maxLength: ROUND_LENGTH }),
  parallel: fc.array(fc.integer({ min: 2, max: 4 }), { minLength: ROUND_LENGTH, maxLength: ROUND_LENGTH }),
});

/** What a worker replies: a deterministic function of its request, carrying a list for later fan-outs. */
function workerOutput(request: StepRequest, shape: Shape): JsonObject {
  const digest = JSON.stringify(request.body).length;
  const length = shape.lists[(request.step.length + digest) % shape.lists.length] ?? 0;
  return {
    ...request.body,
    [request.step]: digest,
    items: Array.from({ length }, (_, i) => `${request.step}-${i}`),
  };
}

export interface RunOutcome {
  job: JobRecord;
  /** "job completed" and "step completed" events per job and step, over every manager. */
  transitions: Map<string, number>;
  /** Requests sent per correlation id and attempt, over every manager. */
  dispatches: Map<string, number>;
  repliesDelivered: number;
  duplicatesDelivered: number;
  conflicts: number;
}

/** Several managers (one per store given: several Lambda instances on one table), or one handling batches at once. */
class Cluster {
  readonly sent: StepRequest[] = [];
  readonly transitions = new Map<string, number>();
  readonly dispatches = new Map<string, number>();
  readonly managers: Manager[];
  /** Commits refused because another handler changed the job first: races that really happened. */
  conflicts = 0;
  private cursor = 0;

  constructor(stores: readonly Store[], fanOutSlice?: number) {
    const bus: Bus = {
      send: async (requests) => {
        for (const request of requests) {
          const key = `${request.correlationId}#${request.attempt}`;
          this.dispatches.set(key, (this.dispatches.get(key) ?? 0) + 1);
        }
        this.sent.push(...requests);
      },
      ensureQueues: async () => {},
      ping: async () => {},
      close: async () => {},
    };
    const timers: TimerScheduler = { arm: async () => {}, disarm: async () => {} };
    const count = (message: string, fields?: LogFields) => {
      if (message !== 'job completed' && message !== 'step completed') return;
      const key = `${message}|${fields?.jobId}|${fields?.step ?? ''}`;
      this.transitions.set(key, (this.transitions.get(key) ?? 0) + 1);
    };
    const telemetry: Telemetry = {
      logger: { debug: count, info: count, warn: () => {}, error: () => {} },
      metrics: noMetrics,
    };
    this.managers = stores.map(
      (store) => new Manager({ store: this.counting(store), bus, timers, telemetry, fanOutSlice }),
    );
  }

  /** The store, counting the conflicts its commits report. */
  private counting(store: Store): Store {
    const commit = store.commit.bind(store);
    return Object.assign(Object.create(store) as Store, {
      commit: async (commits: Parameters<Store['commit']>[0]) => {
        const results = await commit(commits);
        this.conflicts += results.filter((result) => !result.ok).length;
        return results;
      },
    });
  }

  take(): StepRequest[] {
    const fresh = this.sent.slice(this.cursor);
    this.cursor = this.sent.length;
    return fresh;
  }

  async drain(): Promise<void> {
    // A follow-up run by one manager may leave work for no other: drain until all are idle.
    for (let pass = 0; pass < 3; pass++) await Promise.all(this.managers.map((manager) => manager.drain()));
  }
}

/**
 * Runs one job of `shape` to the end. Without `delivery`: serially, one reply at a time on one
 * manager (the reference). With it: in rounds of several batches handled at the same time, each by
 * the next manager in turn, replies taken in a random order, some delivered twice (in the same
 * round, to another handler, and again after the job ended).
 */
export async function runConcurrently(
  shape: Shape,
  delivery: ConcurrentDelivery | null,
  stores: readonly Store[] = [new MemoryStore()],
  names: { workflow: string; jobId: string } = {
    workflow: 'random',
    jobId: '00000000-0000-4000-8000-000000000001',
  },
  /** Children a fan-out creates per transition. @default the engine's */
  fanOutSlice?: number,
): Promise<RunOutcome> {
  const cluster = new Cluster(stores, fanOutSlice);
  const yaml = toYaml(shape).replace('  - name: random\n', `  - name: ${names.workflow}\n`);
  const { workflows, errors } = loadWorkflows(yaml);
  if (errors.length) throw new Error(`invalid generated workflow: ${JSON.stringify(errors)}`);
  const first = cluster.managers[0] as Manager;
  for (const workflow of workflows) await first.registerWorkflow(workflow);
  await first.startJob({ workflow: names.workflow, input: { items: ['a', 'b'] }, id: names.jobId });
  await cluster.drain();

  const toReply = (request: StepRequest): InboundReply => ({
    correlationId: request.correlationId,
    body: JSON.stringify(workerOutput(request, shape)),
  });
  const pool: StepRequest[] = cluster.take();
  const late: StepRequest[] = [];
  const duplicated = new Set<StepRequest>();
  let turn = 0;
  let repliesDelivered = 0;
  let duplicatesDelivered = 0;
  while (pool.length) {
    const parallel = delivery ? (delivery.parallel[turn % ROUND_LENGTH] ?? 2) : 1;
    const batches: InboundReply[][] = Array.from({ length: parallel }, () => []);
    for (let b = 0; b < parallel && pool.length; b++) {
      const size = delivery ? (delivery.batchSizes[turn % ROUND_LENGTH] ?? 1) : 1;
      for (let n = 0; n < size && pool.length; n++) {
        const pick = delivery ? (delivery.order[turn % ROUND_LENGTH] ?? 0) % pool.length : 0;
        const [request] = pool.splice(pick, 1) as [StepRequest];
        (batches[b] as InboundReply[]).push(toReply(request));
        if (delivery?.duplicates[turn % ROUND_LENGTH] && !duplicated.has(request)) {
          // The same reply, at the same time, to another handler; and once more after the job ended.
          duplicated.add(request);
          (batches[(b + 1) % parallel] as InboundReply[]).push(toReply(request));
          late.push(request);
          duplicatesDelivered += 2;
        }
        turn++;
      }
    }
    const nonEmpty = batches.filter((batch) => batch.length);
    repliesDelivered += nonEmpty.reduce((sum, batch) => sum + batch.length, 0);
    await Promise.all(
      nonEmpty.map((batch, b) =>
        (cluster.managers[b % cluster.managers.length] as Manager).handleReplies(batch),
      ),
    );
    await cluster.drain();
    pool.push(...cluster.take());
  }
  if (late.length) {
    repliesDelivered += late.length;
    await Promise.all(
      late.map((request, n) =>
        (cluster.managers[n % cluster.managers.length] as Manager).handleReplies([toReply(request)]),
      ),
    );
    await cluster.drain();
  }
  const job = await first.store.getJob(names.jobId);
  if (!job) throw new Error(`no job ${names.jobId}`);
  for (const manager of cluster.managers) manager.stop();
  return {
    job,
    transitions: cluster.transitions,
    dispatches: cluster.dispatches,
    repliesDelivered,
    duplicatesDelivered,
    conflicts: cluster.conflicts,
  };
}
