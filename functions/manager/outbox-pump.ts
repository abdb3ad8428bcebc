import { type Bus, type OutboxEntry, UndeliverableError } from '../../engine/index.js';
import type { JobStore } from '../../engine/ports/store.js';
import type { Logger } from '../telemetry/telemetry.js';

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;
type FollowUpEntry = Extract<OutboxEntry, { kind: 'followUp' }>;

export interface OutboxPumpOptions {
  store: Pick<JobStore, 'ackOutbox'>;
  bus: Bus;
  logger: Logger;
  /** Carries out follow-ups; resolves once their effects are stored. */
  runFollowUps: (entries: FollowUpEntry[]) => Promise<void>;
  /** A request the bus can never send: its attempt fails with this message. */
  onUndeliverable: (entry: RequestEntry, message: string) => Promise<void>;
  /** @default 2000 */
  sendBatch?: number;
  /** @default 200 */
  followUpBatch?: number;
  /** Called with the seconds from a reply's arrival to the confirmed send of a request it caused. */
  onSent?: (overheadSeconds: number) => void;
  clock?: () => number;
}

/**
 * Carries out what committed transitions stored in the outbox: sends requests (then deletes their
 * entries), runs follow-ups. A crash loses nothing: whatever is still in the store is loaded again on
 * recovery. A failed send is retried with backoff until the bus takes it.
 */
export class OutboxPump {
  private requests: RequestEntry[] = [];
  /**
   * When the reply behind `requests[i]` arrived (NaN: no reply caused it). An array of doubles beside
   * `requests` rather than a map by id: a large fan-out queues 100,000 requests at once.
   */
  private origins: number[] = [];
  private followUps: FollowUpEntry[] = [];
  /** How many requests at the front of `requests` are being sent: `drop` leaves them in place. */
  private sending = 0;
  private readonly queued = new Set<string>();
  private running?: Promise<void>;
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: OutboxPumpOptions) {}

  enqueue(entries: readonly OutboxEntry[], receivedAt?: number): void {
    for (const entry of entries) {
      if (this.queued.has(entry.id)) continue;
      this.queued.add(entry.id);
      if (entry.kind === 'request') {
        this.requests.push(entry);
        this.origins.push(receivedAt !== undefined && this.options.onSent ? receivedAt : Number.NaN);
      } else this.followUps.push(entry);
    }
    this.kick();
  }

  /**
   * A stopped job's requests still waiting here are not sent. Those already handed to the bus are
   * left to finish: `sendSome` removes its batch from the front once the bus has taken it.
   */
  drop(jobId: string): void {
    const before = this.requests.length;
    const requests: RequestEntry[] = [];
    const origins: number[] = [];
    this.requests.forEach((entry, n) => {
      if (n >= this.sending && entry.jobId === jobId) {
        this.queued.delete(entry.id);
        return;
      }
      requests.push(entry);
      origins.push(this.origins[n] as number);
    });
    this.requests = requests;
    this.origins = origins;
    if (before !== this.requests.length) this.options.logger.debug('dropped unsent requests', { jobId });
  }

  get pending(): number {
    return this.requests.length + this.followUps.length;
  }

  /** Resolves when everything queued so far (and what it led to) is done. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.pending && !this.stopped) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.pending && !this.stopped) {
      try {
        if (this.requests.length) await this.sendSome();
        // Follow-ups wait while a send batch's worth of requests does: a large fan-out creates its next
        // slice of children in one, so its requests are sent before more are made.
        if (this.followUps.length && this.requests.length < this.sendBatch) await this.runSomeFollowUps();
        this.failures = 0;
      } catch (error) {
        this.failures++;
        const delay = Math.min(5000, 50 * 2 ** Math.min(this.failures, 7));
        this.options.logger.warn('outbox work failed; retrying', { error, retryInMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private get sendBatch(): number {
    return this.options.sendBatch ?? 2000;
  }

  private async sendSome(): Promise<void> {
    const batch = this.requests.slice(0, this.sendBatch);
    this.sending = batch.length;
    try {
      await this.deliver(batch);
    } finally {
      this.sending = 0;
    }
    // Nothing ran between the send's end and here, and drop() spares what is being sent: the batch
    // is still the front of the queue.
    this.requests.splice(0, batch.length);
    const origins = this.origins.splice(0, batch.length);
    if (this.options.onSent) {
      const now = (this.options.clock ?? Date.now)();
      for (const origin of origins) if (!Number.isNaN(origin)) this.options.onSent((now - origin) / 1000);
    }
    await this.options.store.ackOutbox(batch.map((entry) => entry.id));
    for (const entry of batch) this.queued.delete(entry.id);
  }

  /** Sends a batch; requests the bus can never send fail their attempts instead. */
  private async deliver(batch: RequestEntry[]): Promise<void> {
    try {
      await this.options.bus.send(batch.map((entry) => entry.request));
    } catch (error) {
      const undeliverable = undeliverableIds(error);
      if (!undeliverable) throw error;
      for (const entry of batch.filter((e) => undeliverable.has(e.request.correlationId))) {
        await this.options.onUndeliverable(entry, undeliverable.get(entry.request.correlationId) as string);
      }
    }
  }

  private async runSomeFollowUps(): Promise<void> {
    const batch = this.followUps.slice(0, this.options.followUpBatch ?? 200);
    await this.options.runFollowUps(batch);
    this.followUps.splice(0, batch.length);
    await this.options.store.ackOutbox(batch.map((entry) => entry.id));
    for (const entry of batch) this.queued.delete(entry.id);
  }
}

/** Correlation ids a bus could never send, with why; undefined when the error is worth retrying. */
function undeliverableIds(error: unknown): Map<string, string> | undefined {
  const errors = error instanceof AggregateError ? error.errors : [error];
  const found = new Map<string, string>();
  for (const item of errors) {
    if (!(item instanceof UndeliverableError)) return undefined;
    found.set(item.correlationId, item.message);
  }
  return found.size ? found : undefined;
}
