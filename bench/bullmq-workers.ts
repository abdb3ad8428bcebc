import { FlowProducer, type Job, Worker } from 'bullmq';
import { diamondFlow, fanOutFlow } from './bullmq-flows.js';
import { benchQueues, listItems } from './workloads.js';

/*
 * The BullMQ side's workers, in a process of their own as the echo workers are: one Worker per
 * queue with the same concurrency as the echo workers' prefetch, no-op work. s1 and list add their
 * flows (bullmq-flows.ts); s4 and sum read their children's results.
 *
 * Environment: REDIS_PORT, BENCH_PREFIX, BENCH_CONCURRENCY (default 200). Prints `ready`.
 */

const connection = {
  host: '127.0.0.1',
  port: Number(process.env.REDIS_PORT),
  maxRetriesPerRequest: null,
};
const queues = benchQueues(process.env.BENCH_PREFIX ?? 'bench-');
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 200);
const flows = new FlowProducer({ connection });

const processors: Record<string, (job: Job) => Promise<unknown>> = {
  [queues.s1]: async () => {
    await flows.add(diamondFlow(queues));
    return {};
  },
  [queues.s2]: async () => ({}),
  [queues.s3]: async () => ({}),
  [queues.s4]: async (job) => {
    await job.getChildrenValues();
    return {};
  },
  [queues.list]: async (job) => {
    await flows.add(fanOutFlow(queues, listItems(job.data).items));
    return {};
  },
  [queues.work]: async () => ({}),
  [queues.sum]: async (job) => {
    const results = await job.getChildrenValues();
    return { count: Object.keys(results).length };
  },
};

const workers = Object.entries(processors).map(
  ([queue, processor]) => new Worker(queue, processor, { connection, concurrency }),
);
await Promise.all(workers.map((worker) => worker.waitUntilReady()));

process.once('SIGTERM', () => {
  Promise.all([...workers.map((worker) => worker.close()), flows.close()]).finally(() => process.exit(0));
});
process.stdout.write('ready\n');
