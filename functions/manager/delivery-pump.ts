import type { Delivery, DeliveryLog, SecretResolver } from '../../engine/index.js';
import type { Logger, Metrics } from '../telemetry/telemetry.js';
import {
  DELIVERY_TIMEOUT_MS,
  type DeliveryRules,
  deliveryUrlProblem,
  MAX_DELIVERY_ATTEMPTS,
  retryDelayMs,
} from './delivery-rules.js';
import { webhookSignature } from './webhook-signature.js';

export interface DeliveryPumpOptions {
  log: Pick<DeliveryLog, 'dueDeliveries' | 'updateDelivery'>;
  /** Where each target's signing secret is read (undefined: none can be, and every attempt fails). */
  secrets: SecretResolver | undefined;
  rules: DeliveryRules;
  logger: Logger;
  /** `webhook_deliveries_total` by outcome (delivered, failed, dead). */
  metrics?: Metrics;
  /** @default Date.now */
  clock?: () => number;
  /** @default Math.random */
  random?: () => number;
  /** @default DELIVERY_TIMEOUT_MS */
  timeoutMs?: number;
  /** @default MAX_DELIVERY_ATTEMPTS */
  maxAttempts?: number;
  /** Deliveries taken per round. @default 25 */
  batch?: number;
  /** Posts in flight at once. @default 8 */
  concurrency?: number;
  /** How long `start`'s loop waits when nothing was due. @default 1000 */
  pollMs?: number;
}

/** The signing secrets of a round: their values, or why they could not be read. */
interface SecretValues {
  values: ReadonlyMap<string, string>;
  unreadable?: string;
}

/** What one attempt came to. */
type AttemptResult = { ok: true; status: number } | { ok: false; status?: number; error: string };

/** A delivery taken by a pump stays its for this long past its timeout: another pump takes it after. */
const LEASE_MARGIN_MS = 30_000;

/**
 * Posts the delivery log's due deliveries, off every job's path: a slow or dead receiver holds only
 * its own delivery. Each is taken first (its due time moved past its timeout, written over the
 * revision read, so two pumps never post it at once), posted signed, then recorded delivered, due
 * again after a backoff, or dead after `maxAttempts`. A pump that dies mid-post leaves it taken
 * until its lease ends; then it is posted again: delivery is at least once (receivers dedupe on
 * `Switchyard-Delivery`). serve runs `start`; deployed, the timers function runs `runUntilIdle`.
 */
export class DeliveryPump {
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly batch: number;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly aborts = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private filling: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: DeliveryPumpOptions) {
    this.clock = options.clock ?? Date.now;
    this.random = options.random ?? Math.random;
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.maxAttempts = options.maxAttempts ?? MAX_DELIVERY_ATTEMPTS;
    this.batch = options.batch ?? 25;
    this.concurrency = options.concurrency ?? 8;
    this.pollMs = options.pollMs ?? 1_000;
  }

  /** One round: takes up to `batch` due deliveries and attempts each. @returns how many it attempted */
  async runOnce(): Promise<number> {
    const due = await this.options.log.dueDeliveries(this.clock(), this.batch);
    const taken: Delivery[] = [];
    for (const delivery of due) {
      const claimed = await this.take(delivery);
      if (claimed) taken.push(claimed);
    }
    if (!taken.length) return 0;
    const values = await this.secretValues(taken);
    let next = 0;
    const worker = async () => {
      while (next < taken.length && !this.stopped) {
        const delivery = taken[next++] as Delivery;
        await this.attempt(delivery, values);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, taken.length) }, worker));
    return taken.length;
  }

  /**
   * Rounds until nothing is due or `deadline` (ms) leaves too little time for another: a Lambda
   * invocation's share. @returns how many it attempted
   */
  async runUntilIdle(deadline: number): Promise<number> {
    let total = 0;
    while (!this.stopped && deadline - this.clock() > this.timeoutMs + 1_000) {
      const count = await this.runOnce();
      total += count;
      if (count < this.batch) break;
    }
    return total;
  }

  /**
   * serve at start, before `start`: the deliveries a process that died was posting are due now
   * rather than at the end of its lease (serve is the only process on its database).
   * @returns how many it released
   */
  async releaseTaken(): Promise<number> {
    const pending = await this.options.log.dueDeliveries(Number.MAX_SAFE_INTEGER, 10_000);
    let released = 0;
    const now = this.clock();
    for (const delivery of pending) {
      if (delivery.takenAt === undefined) continue;
      const { takenAt: _taken, ...rest } = delivery;
      if (
        await this.options.log.updateDelivery({
          ...rest,
          nextAttemptAt: now,
          updatedAt: now,
          rev: delivery.rev + 1,
        })
      )
        released++;
    }
    return released;
  }

  /**
   * serve: keeps up to `concurrency` posts in flight, taking more as each ends, and looking again
   * every `pollMs`; a receiver that hangs holds one slot until its timeout, never the others.
   */
  start(): void {
    if (this.stopped || this.timer) return;
    this.schedule(0);
  }

  /** Stops taking deliveries and aborts the posts in flight (each is posted again after its lease). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.aborts.abort();
    await this.filling?.catch(() => undefined);
    await Promise.all([...this.inFlight]);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.fill();
    }, ms);
  }

  /** Takes due deliveries into the free slots, then looks again at once (all taken) or after `pollMs`. */
  private async fill(): Promise<void> {
    if (this.filling || this.stopped) return;
    let next = this.pollMs;
    this.filling = (async () => {
      const room = this.concurrency - this.inFlight.size;
      if (room <= 0) return;
      const due = await this.options.log.dueDeliveries(this.clock(), room);
      const taken: Delivery[] = [];
      for (const delivery of due) {
        const claimed = await this.take(delivery);
        if (claimed) taken.push(claimed);
      }
      if (taken.length === room) next = 0;
      if (!taken.length) return;
      const values = await this.secretValues(taken);
      for (const delivery of taken) {
        const posting: Promise<void> = this.attempt(delivery, values)
          .catch((error: unknown) =>
            this.options.logger.warn('a webhook delivery could not be recorded; it is posted again later', {
              deliveryId: delivery.id,
              error,
            }),
          )
          .finally(() => {
            this.inFlight.delete(posting);
            this.schedule(0);
          });
        this.inFlight.add(posting);
      }
    })();
    try {
      await this.filling;
    } catch (error) {
      this.options.logger.warn('webhook deliveries could not be read; trying again', { error });
    } finally {
      this.filling = undefined;
    }
    this.schedule(next);
  }

  /** The delivery, taken for this pump; undefined when another took it first. */
  private async take(delivery: Delivery): Promise<Delivery | undefined> {
    const now = this.clock();
    const taken: Delivery = {
      ...delivery,
      nextAttemptAt: now + this.timeoutMs + LEASE_MARGIN_MS,
      takenAt: now,
      updatedAt: now,
      rev: delivery.rev + 1,
    };
    return (await this.options.log.updateDelivery(taken)) ? taken : undefined;
  }

  /**
   * The signing secrets the deliveries name, or why none could be read (the secrets service failed:
   * each attempt fails saying so, and is retried).
   */
  private async secretValues(deliveries: readonly Delivery[]): Promise<SecretValues> {
    const resolver = this.options.secrets;
    if (!resolver) return { values: new Map() };
    try {
      return { values: await resolver.resolve([...new Set(deliveries.map((delivery) => delivery.secret))]) };
    } catch (error) {
      this.options.logger.warn('webhook secrets could not be read', { error });
      return {
        values: new Map(),
        unreadable: `secrets could not be read (${(error as Error)?.name ?? 'error'})`,
      };
    }
  }

  private async attempt(delivery: Delivery, secrets: SecretValues): Promise<void> {
    const refused = deliveryUrlProblem(delivery.url, this.options.rules);
    const secret = secrets.values.get(delivery.secret);
    const result: AttemptResult | 'refused' = refused
      ? 'refused'
      : secret === undefined
        ? { ok: false, error: secrets.unreadable ?? this.missingSecret(delivery.secret) }
        : await this.post(delivery, secret);
    // Stopped mid-post: not an attempt of the receiver's. It stays taken; the next start releases it.
    if (result !== 'refused' && !result.ok && this.aborts.signal.aborted) return;
    const now = this.clock();
    const attempts = delivery.attempts + 1;
    const settled: Delivery = { ...delivery, attempts, updatedAt: now, rev: delivery.rev + 1 };
    delete settled.takenAt;
    if (result === 'refused') {
      settled.state = 'dead';
      settled.lastError = refused as string;
      delete settled.lastStatus;
    } else if (result.ok) {
      settled.state = 'delivered';
      settled.deliveredAt = now;
      settled.lastStatus = result.status;
      delete settled.lastError;
    } else {
      if (result.status === undefined) delete settled.lastStatus;
      else settled.lastStatus = result.status;
      settled.lastError = result.error;
      if (attempts >= this.maxAttempts) settled.state = 'dead';
      else settled.nextAttemptAt = now + retryDelayMs(attempts, this.random);
    }
    if (!(await this.options.log.updateDelivery(settled))) {
      this.options.logger.warn('webhook delivery changed while it was posted (redelivered?)', {
        deliveryId: delivery.id,
      });
      return;
    }
    const outcome = settled.state === 'pending' ? 'failed' : settled.state;
    this.options.metrics?.count('webhook_deliveries_total', { outcome });
    const fields = { deliveryId: delivery.id, jobId: delivery.jobId, type: delivery.body.type, attempts };
    if (settled.state === 'delivered') this.options.logger.debug('webhook delivered', fields);
    else if (settled.state === 'dead')
      this.options.logger.warn('webhook delivery dead-lettered', { ...fields, error: settled.lastError });
    else
      this.options.logger.info('webhook delivery failed; retrying later', {
        ...fields,
        error: settled.lastError,
      });
  }

  private missingSecret(name: string): string {
    return this.options.secrets
      ? `secret ${JSON.stringify(name)} is not set`
      : `secret ${JSON.stringify(name)} cannot be read: this manager was started without secrets`;
  }

  private async post(delivery: Delivery, secret: string): Promise<AttemptResult> {
    const body = JSON.stringify(delivery.body);
    const signal = AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.timeoutMs)]);
    try {
      const response = await fetch(delivery.url, {
        method: 'POST',
        body,
        signal,
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Switchyard-Webhooks/1',
          'switchyard-delivery': delivery.id,
          'switchyard-event': delivery.body.type,
          'switchyard-signature': webhookSignature(secret, body, this.clock() / 1000),
        },
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
      return { ok: false, status: response.status, error: `HTTP ${response.status}` };
    } catch (error) {
      return { ok: false, error: postError(error, this.timeoutMs) };
    }
  }
}

/** Why a post failed, in a line (never the body or a header). */
function postError(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (name === 'AbortError') return 'stopped while posting';
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return `${cause?.code ?? (error as Error)?.message ?? String(error)}`.slice(0, 300);
}
