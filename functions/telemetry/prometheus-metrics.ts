import { Counter, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import type { JobQueries, WorkflowRegistry } from '../../engine/index.js';
import { BucketHistogram, type BucketHistogramOptions, geometricBounds } from './bucket-histogram.js';
import { LabelCap } from './label-cap.js';
import { type CounterName, type HistogramName, type Metrics, STEP_LABELS } from './telemetry.js';

const HELP: Record<CounterName | HistogramName, string> = {
  jobs_started_total: 'Jobs started.',
  jobs_finished_total: 'Jobs (top-level and fan-out children) that completed, failed or were cancelled.',
  steps_dispatched_total: 'Steps dispatched (attempts sent, signal waits begun, fan-outs started).',
  steps_completed_total: 'Steps completed.',
  steps_skipped_total: 'Steps skipped: their `when:` was false, or every step they depend on was skipped.',
  step_attempts_failed_total: 'Attempts that failed (error replies, malformed replies, timeouts).',
  retries_total: 'Retries scheduled.',
  timeouts_total: 'Attempts that timed out.',
  replies_ignored_total: 'Replies that changed nothing (duplicate, late, unknown job or step).',
  replies_malformed_total: 'Messages on the reply queue without a usable correlation id.',
  replies_dropped_total:
    'Replies for which neither they nor a failed attempt could be stored: logged and let go of.',
  dead_letters_ignored_total:
    "Dead-lettered requests not acted on: without their request's token (reply authentication), or expired before their copy could have.",
  replies_poisoned_total:
    'Replies in hand whenever the manager crashed, as often as the policy allows: their attempts failed, the replies moved to the poison queue.',
  webhook_deliveries_total:
    'Webhook delivery attempts (docs/notifications.md) by outcome: delivered, failed (to be retried), dead.',
  step_duration_seconds: 'From a step attempt being sent to its reply being processed.',
  reply_batch_size: 'Replies processed per batch (one store transaction).',
  step_overhead_seconds:
    "The manager's overhead per step: from a reply's arrival to the confirmed send of the request it caused.",
};

const STEP = [...STEP_LABELS];

const LABELS: Partial<Record<CounterName, string[]>> = {
  jobs_started_total: ['workflow'],
  jobs_finished_total: ['status'],
  replies_ignored_total: ['reason'],
  dead_letters_ignored_total: ['reason'],
  webhook_deliveries_total: ['outcome'],
  steps_dispatched_total: STEP,
  steps_completed_total: STEP,
  steps_skipped_total: STEP,
  step_attempts_failed_total: STEP,
  retries_total: STEP,
  timeouts_total: STEP,
};

const NO_LABELS: Record<string, string> = Object.freeze({});

/** Distinct values each label keeps before the rest count as `other` (docs/api.md, "Metrics"). */
export const DEFAULT_LABEL_VALUES = 100;

/** One step queue as the queue gauges read it (the API's queue report, with its namespace). */
export interface QueueGaugeEntry {
  queue: string;
  vhost: string | null;
  namespace: string;
  exists: boolean;
  ready?: number;
  consumers?: number | 'unknown';
}

/** Where the job-count gauge reads: the workflows, and each one's jobs by status. */
export type JobCountSource = Pick<WorkflowRegistry, 'listWorkflows'> & Pick<JobQueries, 'countJobs'>;

/** The manager's metrics in Prometheus' text format, plus job counts by workflow and status read from the store. */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  /**
   * Each counter's totals by its (capped) labels, handed to prom-client only when /metrics is read:
   * prom-client hashes a counter's labels at every increment, and a step counts several times.
   */
  private readonly totals = new Map<string, Map<Record<string, string>, number>>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly overhead: BucketHistogram;
  private readonly storeWrites: BucketHistogram;
  private readonly cap: LabelCap;
  /** The capped labels of a labels object seen before (callers keep one per step): a value capped stays so. */
  private readonly cappedLabels = new WeakMap<Record<string, string>, Record<string, string>>();
  /** Bounded: at most the product of the labels' caps. */
  private readonly canonicalLabels = new Map<string, Record<string, string>>();

  constructor(store?: JobCountSource, options: { maxLabelValues?: number } = {}) {
    this.cap = new LabelCap(options.maxLabelValues ?? DEFAULT_LABEL_VALUES);
    const prefix = 'switchyard_';
    for (const name of Object.keys(HELP) as (CounterName | HistogramName)[]) {
      if (name.endsWith('_total')) {
        const totals = new Map<Record<string, string>, number>();
        this.totals.set(name, totals);
        new Counter({
          name: prefix + name,
          help: HELP[name],
          labelNames: LABELS[name as CounterName] ?? [],
          registers: [this.registry],
          collect() {
            this.reset();
            for (const [labels, value] of totals) this.inc(labels, value);
          },
        });
      }
    }
    this.histograms.set(
      'step_duration_seconds',
      new Histogram({
        name: `${prefix}step_duration_seconds`,
        help: HELP.step_duration_seconds,
        labelNames: STEP,
        buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300],
        registers: [this.registry],
      }),
    );
    this.histograms.set(
      'reply_batch_size',
      new Histogram({
        name: `${prefix}reply_batch_size`,
        help: HELP.reply_batch_size,
        buckets: [1, 10, 50, 100, 500, 1000],
        registers: [this.registry],
      }),
    );
    // Observed once per request sent: buckets three to a doubling from 0.1 ms to 2 minutes, which
    // subtract (a benchmark reads the quantiles of its own window) and aggregate across instances.
    this.overhead = this.bucketHistogram({
      name: `${prefix}step_overhead_seconds`,
      help: HELP.step_overhead_seconds,
      bounds: geometricBounds(0.0001, 120, 3),
    });
    // serve's own (observeStoreWrite): its disk's part of a step, beside the overhead it is part of.
    this.storeWrites = this.bucketHistogram({
      name: `${prefix}store_write_seconds`,
      help: "The store's write transactions on the commit path (transitions, acknowledgements), from BEGIN to the end of COMMIT: the disk's sync included.",
      bounds: geometricBounds(0.00005, 120, 3),
    });
    if (store) {
      new Gauge({
        name: `${prefix}jobs`,
        help: 'Top-level jobs by workflow and listed status (waiting: a step waits for someone; pending: not started).',
        labelNames: ['workflow', 'status'],
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const workflow of await store.listWorkflows()) {
            const counts = await store.countJobs(workflow.name);
            for (const [status, count] of Object.entries(counts))
              this.set({ workflow: workflow.name, status }, count);
          }
        },
      });
    }
  }

  count(name: CounterName, labels: Record<string, string> = NO_LABELS, value = 1): void {
    const totals = this.totals.get(name);
    if (!totals || !(value >= 0)) return;
    const capped = this.capped(labels);
    totals.set(capped, (totals.get(capped) ?? 0) + value);
  }

  observe(name: HistogramName, value: number, labels: Record<string, string> = NO_LABELS): void {
    if (name === 'step_overhead_seconds') this.overhead.observe(value);
    else this.histograms.get(name)?.observe(this.capped(labels), value);
  }

  private bucketHistogram(options: BucketHistogramOptions): BucketHistogram {
    const histogram = new BucketHistogram(options);
    this.registry.registerMetric(histogram as unknown as Metric);
    return histogram;
  }

  /** One write transaction of the store (serve's SQLite: `SqliteStore.timeWrites`), in seconds. */
  observeStoreWrite(seconds: number): void {
    this.storeWrites.observe(seconds);
  }

  /** One object per combination of capped values (the totals' keys), whatever object the caller passed. */
  private capped(labels: Record<string, string>): Record<string, string> {
    let capped = this.cappedLabels.get(labels);
    if (capped) return capped;
    const values = this.cap.apply(labels);
    const key = Object.entries(values).flat().join('\u0000');
    capped = this.canonicalLabels.get(key);
    if (!capped) {
      capped = Object.freeze(values);
      this.canonicalLabels.set(key, capped);
    }
    this.cappedLabels.set(labels, capped);
    return capped;
  }

  /**
   * Gauges of the step queues, read from `source` at each scrape: `switchyard_queue_ready_messages`
   * and `switchyard_queue_consumers` by namespace, queue and vhost (a queue the broker does not have
   * yet, or a bus that cannot count consumers, sets none). A scrape whose look fails sets none either:
   * it must not fail the rest of /metrics.
   */
  watchQueues(source: () => Promise<QueueGaugeEntry[]>): void {
    const cap = this.cap;
    let reading: Promise<QueueGaugeEntry[]> | undefined;
    // The two gauges are collected in one scrape: the queues are looked at once for both.
    const look = (): Promise<QueueGaugeEntry[]> => {
      reading ??= source()
        .catch(() => [])
        .finally(() => setTimeout(() => (reading = undefined), 0));
      return reading;
    };
    const labelsOf = (entry: QueueGaugeEntry) =>
      cap.apply({ namespace: entry.namespace, queue: entry.queue, vhost: entry.vhost ?? '' });
    new Gauge({
      name: 'switchyard_queue_ready_messages',
      help: 'Requests waiting in each step queue for a worker, as the broker says at the scrape.',
      labelNames: ['namespace', 'queue', 'vhost'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const entry of await look())
          if (entry.exists && typeof entry.ready === 'number') this.set(labelsOf(entry), entry.ready);
      },
    });
    new Gauge({
      name: 'switchyard_queue_consumers',
      help: 'Workers consuming each step queue, as the broker says at the scrape (RabbitMQ; SQS cannot say).',
      labelNames: ['namespace', 'queue', 'vhost'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const entry of await look())
          if (entry.exists && typeof entry.consumers === 'number') this.set(labelsOf(entry), entry.consumers);
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
