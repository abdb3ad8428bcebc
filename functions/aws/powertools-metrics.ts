import { MetricUnit, type Metrics as PowertoolsMetricsClient } from '@aws-lambda-powertools/metrics';
import type { CounterName, HistogramName, Metrics } from '../telemetry/telemetry.js';

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

  constructor(private readonly client: PowertoolsMetricsClient) {}

  count(name: CounterName, labels: Record<string, string> = {}, value = 1): void {
    const metric = COUNTER_NAMES[name](labels);
    this.counts.set(metric, (this.counts.get(metric) ?? 0) + value);
  }

  observe(name: HistogramName, value: number): void {
    const { name: metric, unit } = HISTOGRAMS[name];
    this.client.addMetric(metric, unit, value);
  }

  /** Writes what this invocation counted as one EMF line (nothing when it counted nothing). */
  flush(): void {
    for (const [metric, value] of this.counts) this.client.addMetric(metric, MetricUnit.Count, value);
    this.counts.clear();
    if (this.client.hasStoredMetrics()) this.client.publishStoredMetrics();
  }
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
