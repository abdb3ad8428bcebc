import {
  type Bus,
  type JobStore,
  type OutboxEntry,
  RetryableSendError,
  type StepRequest,
  UndeliverableError,
} from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import { QueueBackoff, type QueueBackoffOptions } from './queue-backoff.js';
import type { RequestTokens } from './request-tokens.js';

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;
type FollowUpEntry = Extract<OutboxEntry, { kind: 'followUp' }>;

/** Requests handed to the bus at once, unless `sendBatch` says otherwise. */
export const DEFAULT_SEND_BATCH = 200;

export interface OutboxPumpOptions {
  store: Pick<JobStore, 'ackOutbox'>;
  bus: Bus;
  logger: Logger;
  /** Carries out follow-ups; resolves once their effects are stored. */
  runFollowUps: (entries: FollowUpEntry[]) => Promise<void>;
  /** A request the bus can never send (or gave up on): its attempt fails with this message. */
  onUndeliverable: (entry: RequestEntry, message: string) => Promise<void>;
  /**
   * Requests handed to the bus at once. Small, because a broker hands requests to workers before it
   * confirms them (persistent messages are confirmed once on disk): a crash re-sends what is
   * delivered but unconfirmed, at most one batch. 2,000 re-sent 40% of 5,000-child fan-outs under
   * SIGKILLs; 200 re-sends 2–3% (test/soak/fan-out-resends.test.ts). @default DEFAULT_SEND_BATCH
   */
  sendBatch?: number;
  /** @default 200 */
  followUpBatch?: number;
  /**
   * Called with the seconds from a reply's arrival to the confirmed send of a request it caused, both
   * read from `stopwatch`.
   */
  onSent?: (overheadSeconds: number) => void;
  /**
   * The clock of `onSent`'s overhead, in milliseconds, as `enqueue`'s `receivedAt` is: monotonic and
   * finer than a millisecond, as a step's overhead at low load is about one. @default performance.now
   */
  stopwatch?: () => number;
  /** Called with the requests the broker confirmed, once per send. */
  onRequestsSent?: (requests: StepRequest[]) => void;
  /** Called after each send with how many requests it handed to the bus and how long it took, ms. */
  onSendTimed?: (requests: number, ms: number) => void;
  /**
   * Follow-ups to hold for now (a fan-out's next slice when the invocation has no time left for it):
   * they stay in the store and here, do not keep `drain` waiting, and run after `resume`.
   */
  holdFollowUp?: (entry: FollowUpEntry) => boolean;
  clock?: () => number;
  /** Each request's token (`x-switchyard-token`), minted as it is sent (request-tokens.ts). */
  tokens?: RequestTokens;
  /** The wait before sending again to a queue that refused requests (a full queue). */
  refusedBackoff?: QueueBackoffOptions;
  /**
   * A request the broker keeps refusing is given up this long after its first refusal: its attempt
   * fails (`onUndeliverable`), and the step is retried or fails as its settings say. @default 600000
   */
  giveUpAfterMs?: number;
}

/**
 * Carries out what committed transitions stored in the outbox: sends requests (then deletes their
 * entries), runs follow-ups. A crash loses nothing: whatever is still in the store is loaded again on
 * recovery.
 *
 * The bus reports each request's fate. A sent request is acknowledged at once and never sent again.
 * One the broker refused (a full queue) stays, and its queue waits with backoff while the others go
 * on; after `giveUpAfterMs` of refusals its attempt fails. When a send fails as a whole (the broker is
 * unreachable), the batch is retried with backoff, without limit: nothing of it is known to be sent.
 */
export class OutboxPump {
  private requests: RequestEntry[] = [];
  /**
   * When the reply behind `requests[i]` arrived (NaN: no reply caused it). An array of doubles beside
   * `requests` rather than a map by id: a large fan-out queues 100,000 requests at once.
   */
  private origins: number[] = [];
  private followUps: FollowUpEntry[] = [];
  /** Ids of the requests handed to the bus: `drop` leaves them in place. */
  private readonly sending = new Set<string>();
  private readonly queued = new Set<string>();
  /** When each request the broker refused was first refused, by entry id. */
  private readonly refusedSince = new Map<string, number>();
  /** The refused request of each correlation id, to tell when a later attempt supersedes it. */
  private readonly refusedBy = new Map<string, RequestEntry>();
  /** Ids of refused requests a later attempt superseded: acknowledged unsent. */
  private readonly superseded = new Set<string>();
  private readonly backoff: QueueBackoff;
  private running?: Promise<void>;
  /** Requests enqueued so far: a send during which none came is part of a burst. */
  private requestsEnqueued = 0;
  private failures = 0;
  private stopped = false;
  /** Ends the loop's wait for a queue to open early: new work came, or the pump stops. */
  private wake: (() => void) | undefined;
  private wakeOnWork = false;

  constructor(private readonly options: OutboxPumpOptions) {
    this.backoff = new QueueBackoff(options.refusedBackoff);
  }

  /** `receivedAt`: when the reply behind these entries arrived, on `stopwatch`'s clock. */
  enqueue(entries: readonly OutboxEntry[], receivedAt?: number): void {
    for (const entry of entries) {
      if (this.queued.has(entry.id)) continue;
      this.queued.add(entry.id);
      if (entry.kind === 'request') {
        this.requestsEnqueued++;
        this.supersede(entry);
        this.requests.push(entry);
        this.origins.push(receivedAt !== undefined && this.options.onSent ? receivedAt : Number.NaN);
      } else this.followUps.push(entry);
    }
    this.kick();
  }

  /**
   * A new attempt of a step whose earlier attempt's request is still refused (the step timed out and
   * is retried): the earlier request is no longer awaited, and is not sent.
   */
  private supersede(entry: RequestEntry): void {
    const older = this.refusedBy.get(entry.request.correlationId);
    if (!older || older.request.attempt >= entry.request.attempt || this.sending.has(older.id)) return;
    this.refusedBy.delete(entry.request.correlationId);
    this.superseded.add(older.id);
  }

  /**
   * A stopped job's requests still waiting here (refused ones included) are not sent. Those already
   * handed to the bus are left to finish.
   */
  drop(jobId: string): void {
    const before = this.requests.length;
    this.keepRequests((entry) => {
      if (this.sending.has(entry.id) || entry.jobId !== jobId) return true;
      this.queued.delete(entry.id);
      this.forgetRefusal(entry);
      return false;
    });
    if (before !== this.requests.length) this.options.logger.debug('dropped unsent requests', { jobId });
  }

  get pending(): number {
    return this.requests.length + this.followUps.length;
  }

  /** Requests and follow-ups not held: what the loop has to do now. */
  private get runnable(): number {
    const hold = this.options.holdFollowUp;
    if (!hold || this.requests.length) return this.requests.length + this.followUps.length;
    return this.followUps.filter((entry) => !hold(entry)).length;
  }

  /** Runs what was held (holdFollowUp) if it may run now. */
  resume(): void {
    if (this.runnable) this.kick();
  }

  /** Resolves when everything queued so far (and what it led to) is done, or the pump is stopped. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the send in hand; what is left stays in the store for the next start. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private kick(): void {
    if (this.wakeOnWork) this.wake?.();
    if (this.running || this.stopped) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.runnable && !this.stopped) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.runnable && !this.stopped) {
      try {
        if (this.superseded.size) await this.removeSuperseded();
        const { batch, open } = this.nextBatch();
        if (batch.length) await this.sendSome(batch, open > batch.length);
        // Follow-ups wait while a send batch's worth of requests does: a large fan-out creates its next
        // slice of children in one, so its requests are sent before more are made. Requests for a
        // queue that refuses them do not count: they would hold follow-ups back for as long.
        const stillOpen = open - batch.length;
        const ranFollowUps =
          this.followUps.length > 0 && stillOpen < this.sendBatch && (await this.runSomeFollowUps());
        if (!ranFollowUps && !batch.length) await this.waitForAQueue();
        this.failures = 0;
      } catch (error) {
        this.failures++;
        const delay = Math.min(5000, 50 * 2 ** Math.min(this.failures, 7));
        this.options.logger.warn('outbox work failed; retrying', { error, retryInMs: delay });
        await this.sleep(delay);
      }
    }
  }

  private get sendBatch(): number {
    return this.options.sendBatch ?? DEFAULT_SEND_BATCH;
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  /** Up to a send batch of requests, oldest first, skipping queues that wait; `open`: how many could go. */
  private nextBatch(): { batch: RequestEntry[]; open: number } {
    const now = this.now();
    const batch: RequestEntry[] = [];
    let open = 0;
    for (const entry of this.requests) {
      if (this.superseded.has(entry.id)) continue;
      if (!this.backoff.open(entry.request.queue, entry.request.vhost, now)) continue;
      open++;
      if (batch.length < this.sendBatch) batch.push(entry);
    }
    return { batch, open };
  }

  /** Waits until the first queue that refused requests may be tried again, or new work comes. */
  private async waitForAQueue(): Promise<void> {
    const now = this.now();
    const opening = this.backoff.nextOpening(now) ?? now + 1000;
    await this.sleep(Math.max(1, opening - now), true);
  }

  /** `untilWork`: new work ends the wait too (a queue's backoff), not only `stop`. */
  private sleep(ms: number, untilWork = false): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
      this.wakeOnWork = untilWork;
    }).finally(() => {
      this.wake = undefined;
    });
  }

  /**
   * `more`: other requests wait to go right after this batch. If none came while it was out, this is
   * a burst (a fan-out's requests, or recovery's), and its sends are recorded before the next batch
   * goes, so that a crash re-sends at most the batch in hand, not also the one before. Requests that
   * keep coming mean commits do too, which the record rides with a moment later: a write of its own
   * after each such send cost diamonds 6 to 8% of serve's CPU.
   */
  private async sendSome(batch: RequestEntry[], more = false): Promise<void> {
    const enqueuedBefore = this.requestsEnqueued;
    const started = this.now();
    for (const entry of batch) this.sending.add(entry.id);
    const confirms = new ConfirmRecorder(batch, this.options.store, this.options.logger);
    let refused: Map<string, string>;
    let undeliverable: Map<string, string>;
    try {
      ({ refused, undeliverable } = await this.deliver(batch, confirms));
    } finally {
      this.sending.clear();
      await confirms.stop();
    }
    const now = this.now();
    const done = new Set<string>();
    const givenUp: [RequestEntry, string][] = [];
    const outcomes: { queue: string; vhost: string | null; refused: boolean }[] = [];
    for (const entry of batch) {
      const { queue, vhost, correlationId } = entry.request;
      const why = undeliverable.get(correlationId) ?? refused.get(correlationId);
      outcomes.push({ queue, vhost, refused: refused.has(correlationId) });
      if (why === undefined) {
        this.forgetRefusal(entry);
        done.add(entry.id);
        continue;
      }
      if (undeliverable.has(correlationId)) {
        givenUp.push([entry, why]);
        continue;
      }
      const since = this.refusedSince.get(entry.id) ?? now;
      this.refusedSince.set(entry.id, since);
      this.refusedBy.set(correlationId, entry);
      const giveUpAfterMs = this.options.giveUpAfterMs ?? 600_000;
      if (now - since >= giveUpAfterMs) {
        givenUp.push([entry, `not sent: refused for ${Math.round((now - since) / 1000)} s; last: ${why}`]);
      }
    }
    this.backoff.afterSend(outcomes, now);
    this.options.onSendTimed?.(batch.length, now - started);
    if (done.size && this.options.onRequestsSent) {
      this.options.onRequestsSent(batch.filter((entry) => done.has(entry.id)).map((entry) => entry.request));
    }
    if (refused.size) {
      this.options.logger.warn('the broker refused requests; retrying them with backoff', {
        refused: refused.size,
        queues: [
          ...new Set(batch.filter((e) => refused.has(e.request.correlationId)).map((e) => e.request.queue)),
        ],
      });
    }
    const burst = more && this.requestsEnqueued === enqueuedBefore;
    await this.removeSent(done, true, confirms.recorded, burst);
    const failed = new Set<string>();
    try {
      for (const [entry, message] of givenUp) {
        await this.options.onUndeliverable(entry, message);
        this.forgetRefusal(entry);
        failed.add(entry.id);
      }
    } finally {
      await this.removeSent(failed, false);
    }
  }

  private async removeSuperseded(): Promise<void> {
    const ids = new Set(this.superseded);
    await this.removeSent(ids, false);
    for (const id of ids) {
      this.superseded.delete(id);
      this.refusedSince.delete(id);
    }
  }

  private forgetRefusal(entry: RequestEntry): void {
    this.refusedSince.delete(entry.id);
    if (this.refusedBy.get(entry.request.correlationId) === entry)
      this.refusedBy.delete(entry.request.correlationId);
  }

  /**
   * Takes the requests in `done` out (acknowledged in the store, but for those `acked` already);
   * `sent`: measure their overhead; `urgent`: written before this returns, not deferred.
   */
  private async removeSent(
    done: ReadonlySet<string>,
    sent = true,
    acked: ReadonlySet<string> = new Set(),
    urgent = false,
  ): Promise<void> {
    if (!done.size) return;
    const now = this.options.stopwatch ? this.options.stopwatch() : performance.now();
    const origins: number[] = [];
    this.keepRequests((entry, origin) => {
      if (!done.has(entry.id)) return true;
      if (sent && !Number.isNaN(origin)) origins.push(origin);
      return false;
    });
    if (this.options.onSent) for (const origin of origins) this.options.onSent((now - origin) / 1000);
    const toAck = acked.size ? [...done].filter((id) => !acked.has(id)) : [...done];
    if (toAck.length) await this.options.store.ackOutbox(toAck, { urgent });
    for (const id of done) this.queued.delete(id);
  }

  /** Keeps the requests (and their origins) for which `keep` says so, in order. */
  private keepRequests(keep: (entry: RequestEntry, origin: number) => boolean): void {
    const requests: RequestEntry[] = [];
    const origins: number[] = [];
    this.requests.forEach((entry, n) => {
      const origin = this.origins[n] as number;
      if (!keep(entry, origin)) return;
      requests.push(entry);
      origins.push(origin);
    });
    this.requests = requests;
    this.origins = origins;
  }

  /**
   * Sends a batch; returns the requests not sent, by correlation id, with why. Throws when the bus
   * says nothing of what it sent: the whole batch is tried again.
   */
  private async deliver(
    batch: RequestEntry[],
    confirms: ConfirmRecorder,
  ): Promise<{ refused: Map<string, string>; undeliverable: Map<string, string> }> {
    const refused = new Map<string, string>();
    const undeliverable = new Map<string, string>();
    const tokens = this.options.tokens;
    try {
      await tokens?.ready();
      await this.options.bus.send(
        batch.map((entry) => entry.request),
        {
          onSent: (request) => confirms.confirmed(request),
          ...(tokens ? { tokenOf: (request) => tokens.mint(request.correlationId, request.attempt) } : {}),
        },
      );
    } catch (error) {
      const errors = error instanceof AggregateError ? error.errors : [error];
      for (const item of errors) {
        if (item instanceof UndeliverableError) undeliverable.set(item.correlationId, item.message);
        else if (item instanceof RetryableSendError) refused.set(item.correlationId, item.message);
        else throw error;
      }
    }
    return { refused, undeliverable };
  }

  /** Runs the first follow-ups not held; false when every one is held. */
  private async runSomeFollowUps(): Promise<boolean> {
    const hold = this.options.holdFollowUp;
    const size = this.options.followUpBatch ?? 200;
    const batch = hold
      ? this.followUps.filter((entry) => !hold(entry)).slice(0, size)
      : this.followUps.slice(0, size);
    if (!batch.length) return false;
    await this.options.runFollowUps(batch);
    const ran = new Set(batch);
    this.followUps = this.followUps.filter((entry) => !ran.has(entry));
    await this.options.store.ackOutbox(batch.map((entry) => entry.id));
    for (const entry of batch) this.queued.delete(entry.id);
    return true;
  }
}

/** How often a long send records the requests the broker confirmed so far. */
const RECORD_CONFIRMS_EVERY_MS = 10;

/**
 * Records the requests of a send batch as the broker confirms them, every 10 ms while the send goes
 * on, rather than all at its end: a crash in the middle of a long send (a fan-out's thousands of
 * requests) then re-sends only what was not yet confirmed, not the whole batch.
 */
class ConfirmRecorder {
  readonly recorded = new Set<string>();
  private readonly entryOf: Map<StepRequest, RequestEntry>;
  private waiting: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    batch: readonly RequestEntry[],
    private readonly store: Pick<JobStore, 'ackOutbox'>,
    private readonly logger: Logger,
  ) {
    this.entryOf = new Map(batch.map((entry) => [entry.request, entry]));
  }

  confirmed(request: StepRequest): void {
    const entry = this.entryOf.get(request);
    if (!entry || this.stopped) return;
    this.waiting.push(entry.id);
    this.timer ??= setTimeout(() => this.flush(), RECORD_CONFIRMS_EVERY_MS);
  }

  /** Stops recording; what is still waiting is left to the caller, which acknowledges every sent request. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }

  private flush(): void {
    this.timer = undefined;
    const ids = this.waiting;
    this.waiting = [];
    if (!ids.length || this.stopped) return;
    this.writing = this.writing
      .then(() => this.store.ackOutbox(ids, { urgent: true }))
      .then(
        () => {
          for (const id of ids) this.recorded.add(id);
        },
        (error: unknown) => {
          // Not fatal: the end of the send acknowledges these requests again.
          this.logger.warn('could not record confirmed requests yet', { error, requests: ids.length });
        },
      );
  }
}
