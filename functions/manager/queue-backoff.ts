/** How the outbox waits before sending to a queue that refused requests again. */
export interface QueueBackoffOptions {
  /** @default 250 */
  firstDelayMs?: number;
  /** @default 30000 */
  maxDelayMs?: number;
}

/**
 * Per queue (and vhost): when the next send to it may go, after it refused requests. Each refusal in a
 * row doubles the wait, up to a ceiling; a send it takes clears it. Other queues are not slowed.
 */
export class QueueBackoff {
  private readonly waits = new Map<string, { refusals: number; until: number }>();
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: QueueBackoffOptions = {}) {
    this.firstDelayMs = options.firstDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
  }

  /** Whether requests for the queue may be sent at `now`. */
  open(queue: string, vhost: string | null, now: number): boolean {
    if (this.waits.size === 0) return true;
    const wait = this.waits.get(key(queue, vhost));
    return wait === undefined || wait.until <= now;
  }

  /**
   * Records one send's outcome per queue. A queue that refused all its requests waits twice as long
   * as the last time; one that took some (it has room again, a little) waits the first delay; one
   * that took all waits no more.
   */
  afterSend(
    outcomes: Iterable<{ queue: string; vhost: string | null; refused: boolean }>,
    now: number,
  ): void {
    const byQueue = new Map<string, { took: boolean; refused: boolean }>();
    for (const { queue, vhost, refused } of outcomes) {
      const queueKey = key(queue, vhost);
      const seen = byQueue.get(queueKey) ?? { took: false, refused: false };
      if (refused) seen.refused = true;
      else seen.took = true;
      byQueue.set(queueKey, seen);
    }
    for (const [queueKey, { took, refused }] of byQueue) {
      if (!refused) {
        this.waits.delete(queueKey);
        continue;
      }
      const refusals = took ? 1 : (this.waits.get(queueKey)?.refusals ?? 0) + 1;
      const delay = Math.min(this.maxDelayMs, this.firstDelayMs * 2 ** Math.min(refusals - 1, 30));
      this.waits.set(queueKey, { refusals, until: now + delay });
    }
  }

  /** The earliest moment after `now` a waiting queue opens again; undefined when none waits. */
  nextOpening(now: number): number | undefined {
    let earliest: number | undefined;
    for (const { until } of this.waits.values()) {
      if (until > now && (earliest === undefined || until < earliest)) earliest = until;
    }
    return earliest;
  }
}

function key(queue: string, vhost: string | null): string {
  return `${vhost ?? ''}\u0000${queue}`;
}
