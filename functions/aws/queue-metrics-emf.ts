import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { QueueMetricsReport } from './queue-metrics.js';

/** The CloudWatch names of the manager's queue metrics (namespace `Switchyard`), which the stack's alarms watch. */
export const QUEUE_METRIC_NAMES = {
  /** Per queue (dimensions `service`, `Queue`): messages waiting. */
  depth: 'QueueDepth',
  /** Per queue (dimensions `service`, `Queue`): consumers. */
  consumers: 'QueueConsumers',
  /** Dimension `service` alone: seconds since the oldest stored request that is not sent yet. */
  oldestUnsent: 'OldestUnsentRequestAge',
} as const;

/** The CloudWatch dimension that names the queue. */
export const QUEUE_DIMENSION = 'Queue';

/**
 * Writes a measurement as embedded metric format lines through Powertools: one single-metric line
 * per figure, each queue its own `Queue` dimension next to the `service` one.
 */
export function publishQueueMetrics(metrics: Metrics, report: QueueMetricsReport): void {
  const put = (
    name: string,
    value: number,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    queue?: string,
  ) => {
    const single = metrics.singleMetric();
    if (queue !== undefined) single.addDimension(QUEUE_DIMENSION, queue);
    single.addMetric(name, unit, value);
  };
  for (const { queue, depth, consumers } of report.queues) {
    put(QUEUE_METRIC_NAMES.depth, depth, MetricUnit.Count, queue);
    put(QUEUE_METRIC_NAMES.consumers, consumers, MetricUnit.Count, queue);
  }
  put(QUEUE_METRIC_NAMES.oldestUnsent, report.oldestUnsentSeconds, MetricUnit.Seconds);
}
