import {
  awaitedRequest,
  type CompiledWorkflow,
  type JobRecord,
  type OutboxEntry,
  parseCorrelationId,
  type StepRequest,
} from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';

type RequestEntry = Extract<OutboxEntry, { kind: 'request' }>;

export interface RequestRefresherOptions {
  /** How long a request lives in the broker (the bus gives it this `expiration`). */
  ttlMs: number;
  loadJobs: (ids: readonly string[]) => Promise<Map<string, JobRecord>>;
  workflowOf: (job: JobRecord) => Promise<CompiledWorkflow | undefined>;
  /** Sends a request again (through the outbox pump: its backoff and retries apply). */
  resend: (entries: RequestEntry[]) => void;
  logger: Logger;
  clock?: () => number;
  /** How often due requests are looked at. @default ttlMs / 10, between 50 ms and 10 s */
  tickMs?: number;
}

/** A copy's dead letter may come this much of a TTL before its expiry as the manager reckons it. */
const EARLY_FRACTION = 0.1;
/** Re-sends on dead letters remembered (to refuse a second within half a TTL). */
const MAX_RECENT = 10_000;

interface Watched {
  jobId: string;
  step: string;
  attempt: number;
  /** When its copy in the broker expires (and it is sent again if still awaited). */
  due: number;
}

/**
 * Keeps a request in its queue for as long as its step waits for it, although every request expires
 * (`expiration`) after the request TTL: when the TTL of the copy last sent has passed and the step
 * still waits for that attempt with no reply, the same request (same attempt) is sent again. A
 * request nobody waits for any more (the step completed, failed, timed out, or the job was cancelled)
 * is not: it leaves the broker within the TTL, even in a queue whose worker rejects it for ever.
 *
 * A worker still holding the old copy when it is sent again (a handler running longer than the TTL
 * without heartbeats) leads to a duplicate, ignored by the engine like any other. A heartbeat pushes
 * the next sending back. What it watches is in memory: after a restart `adopt` reads it from the
 * running jobs.
 */
export class RequestRefresher {
  /** By correlation id: the awaited attempt and when its copy expires. */
  private readonly watched = new Map<string, Watched>();
  /** `<correlation id>:<attempt>` of the requests re-sent on a dead letter, and when: oldest first. */
  private readonly recentlyResent = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  private resends = 0;

  constructor(private readonly options: RequestRefresherOptions) {
    const tick = options.tickMs ?? Math.min(10_000, Math.max(50, Math.floor(options.ttlMs / 10)));
    this.timer = setInterval(() => void this.sweep(), tick);
    this.timer.unref();
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  /** Requests the broker confirmed just now: each expires a TTL from now. */
  sent(requests: readonly StepRequest[]): void {
    const now = this.now();
    const due = now + this.options.ttlMs;
    for (const request of requests) {
      // Its deadline comes first: then the step's timeout, not a new copy, decides what follows.
      if (request.deadline !== undefined && request.deadline <= due) {
        this.watched.delete(request.correlationId);
        continue;
      }
      this.watch(request.correlationId, {
        jobId: request.jobId,
        step: request.step,
        attempt: request.attempt,
        due,
      });
    }
  }

  /** A heartbeat: a worker holds the request, so its next copy waits a TTL from now. */
  touch(correlationId: string, attempt: number | undefined): void {
    const watched = this.watched.get(correlationId);
    if (!watched || (attempt !== undefined && attempt !== watched.attempt)) return;
    this.watch(correlationId, { ...watched, due: this.now() + this.options.ttlMs });
  }

  /** A reply to the request came: nothing to send again (a new attempt is watched when it is sent). */
  forget(correlationId: string): void {
    this.watched.delete(correlationId);
  }

  /**
   * The broker says the request expired (its dead letter came back): sent again now if still
   * awaited, whether or not it was watched (after a restart, say). Not when the copy last sent
   * cannot have expired yet, nor twice within half a TTL: anyone who can publish on the broker can
   * forge a dead letter, and 500 forged ones must not send one request 500 times.
   */
  async expired(correlationId: string, attempt: number | undefined): Promise<boolean> {
    const target = parseCorrelationId(correlationId);
    if (!target) return false;
    const watched = this.watched.get(correlationId);
    const which = attempt ?? watched?.attempt;
    if (which === undefined) return false;
    const now = this.now();
    const early =
      watched && watched.attempt === which && now < watched.due - this.options.ttlMs * EARLY_FRACTION;
    const key = `${correlationId}:${which}`;
    const recent = (this.recentlyResent.get(key) ?? Number.NEGATIVE_INFINITY) > now - this.options.ttlMs / 2;
    if (early || recent) return false;
    if (watched && watched.attempt === which) this.watched.delete(correlationId);
    this.recentlyResent.delete(key);
    this.recentlyResent.set(key, now);
    if (this.recentlyResent.size > MAX_RECENT) {
      this.recentlyResent.delete(this.recentlyResent.keys().next().value as string);
    }
    await this.resendAwaited([{ jobId: target.jobId, step: target.step, attempt: which, due: 0 }]);
    return true;
  }

  /**
   * After a restart: watches every request these running jobs wait for, due when a copy sent when
   * its attempt started (or a TTL, or two, later) expires.
   */
  adopt(jobs: Iterable<JobRecord>): void {
    const now = this.now();
    const ttl = this.options.ttlMs;
    const adopted: [string, Watched][] = [];
    for (const job of jobs) {
      if (job.status !== 'running') continue;
      for (const state of job.steps) {
        if (state.status !== 'running' || state.attempts === 0 || state.job !== undefined) continue;
        if (state.children !== undefined) continue;
        const started = state.attemptStartedAt ?? now;
        const due = now + ttl - (Math.max(0, now - started) % ttl);
        if (state.deadline !== undefined && state.deadline <= due) continue;
        const correlationId = `${job.id}:${state.name}`;
        if (this.watched.has(correlationId)) continue;
        adopted.push([correlationId, { jobId: job.id, step: state.name, attempt: state.attempts, due }]);
      }
    }
    adopted.sort((a, b) => a[1].due - b[1].due);
    for (const [correlationId, watched] of adopted) this.watched.set(correlationId, watched);
  }

  get size(): number {
    return this.watched.size;
  }

  /** Requests sent again so far. */
  get resent(): number {
    return this.resends;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Moves the entry to the end of the map: the map stays (nearly) in order of `due`. */
  private watch(correlationId: string, watched: Watched): void {
    this.watched.delete(correlationId);
    this.watched.set(correlationId, watched);
  }

  /** Sends again the due requests still awaited; forgets the rest. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const now = this.now();
    const due: Watched[] = [];
    // The whole map: entries adopted after a restart are not in order of `due`.
    for (const [correlationId, watched] of this.watched) {
      if (watched.due > now) continue;
      due.push(watched);
      this.watched.delete(correlationId);
    }
    if (!due.length) return;
    try {
      await this.resendAwaited(due);
    } catch (error) {
      this.options.logger.warn('could not check expired requests; trying again', { error });
      for (const watched of due) {
        const correlationId = `${watched.jobId}:${watched.step}`;
        if (!this.watched.has(correlationId)) this.watched.set(correlationId, { ...watched, due: now });
      }
    }
  }

  private async resendAwaited(candidates: readonly Watched[]): Promise<void> {
    const jobs = await this.options.loadJobs([...new Set(candidates.map((watched) => watched.jobId))]);
    const now = this.now();
    const entries: RequestEntry[] = [];
    for (const { jobId, step, attempt } of candidates) {
      const job = jobs.get(jobId);
      const workflow = job && (await this.options.workflowOf(job));
      const request = job && workflow && awaitedRequest(workflow, job, step, attempt, now);
      if (!request) continue;
      this.resends++;
      entries.push({
        id: `${request.correlationId}:${attempt}:again:${now}:${this.resends}`,
        kind: 'request',
        jobId,
        createdAt: now,
        request,
      });
    }
    if (!entries.length) return;
    this.options.logger.info('requests expired unanswered; sending them again', { count: entries.length });
    this.options.resend(entries);
  }
}
