import { type Bus, compileWorkflow, type JobStore, type WorkflowRegistry } from '../../engine/index.js';

/** One queue's figures, as the stack's alarms read them (metric `QueueDepth`, `QueueConsumers`, dimension `Queue`). */
export interface QueueMetric {
  /** The queue's name; `<vhost>/<queue>` outside the default vhost. */
  queue: string;
  /** Messages waiting for a consumer. */
  depth: number;
  consumers: number;
}

export interface QueueMetricsReport {
  queues: QueueMetric[];
  /** Seconds since the oldest request the manager stored and has not sent yet (0: none waits). */
  oldestUnsentSeconds: number;
  /** Queues the broker could not be asked about, with why (logged; they get no data point). */
  unknown: { queue: string; error: string }[];
}

export interface QueueMetricsDeps {
  registry: Pick<WorkflowRegistry, 'listWorkflows' | 'getWorkflow'>;
  bus: Pick<Bus, 'inspectQueues'>;
  outbox: Pick<JobStore, 'pendingOutbox'>;
  /** The manager's own queues on the broker: the reply queue, the parked queue and the poison queue. */
  managerQueues: readonly string[];
  clock: () => number;
}

/**
 * Amazon MQ for RabbitMQ 4 publishes no per-queue metrics, so the manager measures its queues
 * itself, once a minute (the timers function's sweep): the depth and consumers of the reply queue,
 * the parked queue and every step queue of the registered workflows (a passive declare each, over
 * the bus's connection: nothing is consumed or created), and the age of the oldest request stored
 * but not sent (the one age it can know: a message's age in a RabbitMQ queue is not told).
 */
export async function measureQueues(deps: QueueMetricsDeps): Promise<QueueMetricsReport> {
  const queues = [
    ...deps.managerQueues.map((queue) => ({ queue, vhost: null })),
    ...(await stepQueues(deps.registry)),
  ];
  const health = deps.bus.inspectQueues ? await deps.bus.inspectQueues(queues) : [];
  const measured: QueueMetric[] = [];
  const unknown: QueueMetricsReport['unknown'] = [];
  for (const entry of health) {
    const queue = entry.vhost && entry.vhost !== '/' ? `${entry.vhost}/${entry.queue}` : entry.queue;
    if (entry.error !== undefined) {
      unknown.push({ queue, error: entry.error });
    } else if (!entry.exists) {
      // A queue that does not exist (yet) holds nothing, and nothing consumes it.
      measured.push({ queue, depth: 0, consumers: 0 });
    } else if (typeof entry.consumers !== 'number') {
      unknown.push({ queue, error: 'the broker does not count its consumers' });
    } else {
      measured.push({ queue, depth: entry.ready ?? 0, consumers: entry.consumers });
    }
  }
  const [oldest] = (await deps.outbox.pendingOutbox({ limit: 1 })).entries;
  const oldestUnsentSeconds = oldest ? Math.max(0, Math.floor((deps.clock() - oldest.createdAt) / 1000)) : 0;
  return { queues: measured, oldestUnsentSeconds, unknown };
}

/** Every queue a worker step of a registered workflow (its latest version) sends to, on each of its vhosts. */
async function stepQueues(
  registry: QueueMetricsDeps['registry'],
): Promise<{ queue: string; vhost: string | null }[]> {
  const found = new Map<string, { queue: string; vhost: string | null }>();
  for (const summary of await registry.listWorkflows()) {
    const stored = await registry.getWorkflow(summary.name);
    if (!stored) continue;
    const workflow = compileWorkflow(stored.definition, stored.version);
    const vhosts = workflow.vhosts.length ? workflow.vhosts : [null];
    for (const graph of [workflow.main, ...workflow.tasks.values()]) {
      for (const step of graph.steps) {
        if (step.kind !== 'worker') continue;
        for (const vhost of vhosts) found.set(`${vhost}\u0000${step.queue}`, { queue: step.queue, vhost });
      }
    }
  }
  return [...found.values()];
}
