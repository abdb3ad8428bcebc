import { MetricUnit, type Metrics as PowertoolsMetricsClient } from '@aws-lambda-powertools/metrics';
import { LabelCap } from '../telemetry/label-cap.js';
import type { CounterName, HistogramName, Metrics } from '../telemetry/telemetry.js';

/**
 * The counters also written per step, with dimensions `Namespace`, `Workflow`, `Step` and `Queue`:
 * the incident metrics (which step fails, retries, times out). CloudWatch bills each combination of
 * dimension values as a metric of its own, so only these three are, and each dimension keeps its
 * first `STEP_DIMENSION_VALUES` values per container (the rest count as `other`); the aggregate
 * without dimensions is written as before, for the stack's alarms (docs/deploying.md, "Metrics").
 */
const STEP_DIMENSIONED: ReadonlySet<CounterName> = new Set([
  'step_attempts_failed_total',
  'retries_total',
  'timeouts_total',
]);
export const STEP_DIMENSION_VALUES = 20;

/**
 * CloudWatch names of the manager's counters. A label becomes part of the name (never a dimension):
 * every metric keeps only Powertools' default `service` dimension, which the stack's alarms watch
 * (infra/constructs/monitoring.ts alarms on `JobsFailed` with `service` alone).
 */
const COUNTER_NAMES: Record<CounterName, (labels: Record<string, string>) => string> = {
  jobs_started_total: () => 'JobsStarted',
  jobs_finished_total: (labels) => `Jobs${capitalize(labels.status ?? 'finished')}`,
  steps_dispatched_total: () => 'StepsDispatched',
  steps_completed_total: () => 'StepsCompleted',
  steps_skipped_total: () => 'StepsSkipped',
  step_attempts_failed_total: () => 'StepAttemptsFailed',
  retries_total: () => 'Retries',
  timeouts_total: () => 'Timeouts',
  replies_ignored_total: () => 'RepliesIgnored',
  replies_malformed_total: () => 'RepliesMalformed',
  replies_dropped_total: () => 'RepliesDropped',
  dead_letters_ignored_total: () => 'DeadLettersIgnored',
  replies_poisoned_total: () => 'RepliesPoisoned',
  webhook_deliveries_total: (labels) => `Webhooks${capitalize(labels.outcome ?? 'attempted')}`,
};

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

const HISTOGRAMS: Record<HistogramName, { name: string; unit: Unit }> = {
  step_duration_seconds: { name: 'StepDuration', unit: MetricUnit.Seconds },
  reply_batch_size: { name: 'ReplyBatchSize', unit: MetricUnit.Count },
  step_overhead_seconds: { name: 'StepOverhead', unit: MetricUnit.Seconds },
};

/**
 * The manager's metrics as CloudWatch embedded metric format (EMF) through Powertools. Counts are
 * added up during an invocation and written once by `flush()`, which each handler calls before it
 * returns; observations are kept as values (Powertools writes them out every 100).
 */
export class PowertoolsMetrics implements Metrics {
  private readonly counts = new Map<string, number>();
  /** Per step: `<metric>\u0000<dimensions as JSON>` to its count. */
  private readonly stepCounts = new Map<string, number>();
  private readonly cap = new LabelCap(STEP_DIMENSION_VALUES);

  constructor(private readonly client: PowertoolsMetricsClient) {}

  count(name: CounterName, labels: Record<string, string> = {}, value = 1): void {
    const metric = COUNTER_NAMES[name](labels);
    this.counts.set(metric, (this.counts.get(metric) ?? 0) + value);
    if (STEP_DIMENSIONED.has(name) && labels.step) {
      const dimensions = this.cap.apply({
        Namespace: labels.namespace ?? '',
        Workflow: labels.workflow ?? '',
        Step: labels.step,
        Queue: labels.queue || '-',
      });
      const key = `${metric}\u0000${JSON.stringify(dimensions)}`;
      this.stepCounts.set(key, (this.stepCounts.get(key) ?? 0) + value);
    }
  }

  observe(name: HistogramName, value: number): void {
    const { name: metric, unit } = HISTOGRAMS[name];
    this.client.addMetric(metric, unit, value);
  }

  /** Writes what this invocation counted as one EMF line (nothing when it counted nothing). */
  flush(): void {
    for (const [metric, value] of this.counts) this.client.addMetric(metric, MetricUnit.Count, value);
    this.counts.clear();
    // Each step's counts: an EMF line of its own, with its dimensions beside the service's.
    for (const [key, value] of this.stepCounts) {
      const [metric, dimensions] = key.split('\u0000') as [string, string];
      const single = this.client.singleMetric();
      single.addDimensions(JSON.parse(dimensions) as Record<string, string>);
      single.addMetric(metric, MetricUnit.Count, value);
    }
    this.stepCounts.clear();
    if (this.client.hasStoredMetrics()) this.client.publishStoredMetrics();
  }
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
