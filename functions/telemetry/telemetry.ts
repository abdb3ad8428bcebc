/** Fields every log line may carry; the same names locally and in Lambda. */
export interface LogFields {
  jobId?: string;
  step?: string;
  attempt?: number;
  correlationId?: string;
  durationMs?: number;
  [key: string]: unknown;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** The counters and histograms the manager keeps (Prometheus locally, CloudWatch EMF in Lambda). */
export type CounterName =
  | 'jobs_started_total'
  | 'jobs_finished_total'
  | 'steps_dispatched_total'
  | 'steps_completed_total'
  | 'steps_skipped_total'
  | 'step_attempts_failed_total'
  | 'retries_total'
  | 'timeouts_total'
  | 'replies_ignored_total'
  | 'replies_malformed_total'
  | 'replies_dropped_total'
  | 'dead_letters_ignored_total'
  | 'replies_poisoned_total'
  | 'webhook_deliveries_total';

export type HistogramName = 'step_duration_seconds' | 'reply_batch_size' | 'step_overhead_seconds';

/**
 * The labels of a step's metrics (attempts, failures, retries, timeouts, durations): its workflow's
 * namespace and plain name, the step, and the queue its requests go to (empty for a step that sends
 * none: signal, fan-out, sub-workflow). Values past a cap count as `other` (label-cap.ts).
 */
export const STEP_LABELS = ['namespace', 'workflow', 'step', 'queue'] as const;
export type StepLabels = Record<(typeof STEP_LABELS)[number], string>;

export interface Metrics {
  count(name: CounterName, labels?: Record<string, string>, value?: number): void;
  observe(name: HistogramName, value: number, labels?: Record<string, string>): void;
}

export interface Telemetry {
  logger: Logger;
  metrics: Metrics;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
export const noMetrics: Metrics = { count() {}, observe() {} };
export const silentTelemetry: Telemetry = { logger: silentLogger, metrics: noMetrics };
