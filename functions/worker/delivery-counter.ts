/**
 * Counts the failed deliveries of each request (correlation id and attempt) in this process, so
 * that a request whose handler keeps failing is answered with an error instead of looping forever.
 * Requests that went on to another process would stay counted forever; the oldest are forgotten
 * beyond `capacity`.
 */
export class DeliveryCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** Records one more failed delivery and returns how many there have been. */
  recordFailure(correlationId: string, attempt: number | undefined): number {
    const key = keyOf(correlationId, attempt);
    const count = (this.counts.get(key) ?? 0) + 1;
    // Delete first so that the key moves to the end: Map order is then oldest-touched first.
    this.counts.delete(key);
    this.counts.set(key, count);
    if (this.counts.size > this.capacity) {
      const oldest = this.counts.keys().next();
      if (!oldest.done) this.counts.delete(oldest.value);
    }
    return count;
  }

  forget(correlationId: string, attempt: number | undefined): void {
    this.counts.delete(keyOf(correlationId, attempt));
  }
}

function keyOf(correlationId: string, attempt: number | undefined): string {
  return `${correlationId}#${attempt ?? ''}`;
}
