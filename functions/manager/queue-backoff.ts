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
    const wait = this.waits.get(key(queue, vhost));
    return wait === undefined || wait.until <= now;
  }

  refused(queue: string, vhost: string | null, now: number): void {
    const refusals = (this.waits.get(key(queue, vhost))?.refusals ?? 0) + 1;
    const delay = Math.min(this.maxDelayMs, this.firstDelayMs * 2 ** Math.min(refusals - 1, 30));
    this.waits.set(key(queue, vhost), { refusals, until: now + delay });
  }

  took(queue: string, vhost: string | null): void {
    this.waits.delete(key(queue, vhost));
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
