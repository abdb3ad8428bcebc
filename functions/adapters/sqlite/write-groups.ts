/** Taken when the module loads, so that a test's fake timers cannot hold writes back. */
const nextTurn = setImmediate;
const later = setTimeout;
const cancelLater = clearTimeout;

/** How long a deferred write waits for another write to ride with before it gets a transaction of its own. */
export const DEFERRED_WRITE_MS = 100;

interface Waiting {
  write: () => unknown;
  /** Runs right after the transaction that held `write` committed, before anything else can read. */
  committed?: (result: never) => void;
  resolve: (result: never) => void;
  reject: (error: unknown) => void;
}

const ignore = (): void => {};

/**
 * Group commit across calls: the writes queued before the next turn of the event loop run in call
 * order inside one transaction (one WAL sync for all of them), and each call gets its own result.
 * `flush` runs at once what is waiting.
 *
 * A deferred write (`defer`) takes its place in that order but does not hurry a transaction: it
 * rides with the next write, or gets one of its own after `DEFERRED_WRITE_MS`. It is for writes
 * whose loss in a crash only repeats work, such as outbox acknowledgements (a request sent again).
 *
 * When the joint transaction throws, each write runs again in a transaction of its own, so that only
 * the call whose write fails sees the error.
 */
export class WriteGroups {
  private waiting: Waiting[] = [];
  private scheduled = false;
  private deferred?: ReturnType<typeof setTimeout>;

  /** `transaction` runs its callback inside one transaction and returns what the callback returns. */
  constructor(private readonly transaction: <T>(body: () => T) => T) {}

  add<T>(write: () => T, committed?: (result: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        write,
        committed: committed as ((result: never) => void) | undefined,
        resolve: resolve as (result: never) => void,
        reject,
      });
      if (this.scheduled) return;
      this.scheduled = true;
      nextTurn(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  /** Queued in call order like `add`, but written with the next transaction; a failure is dropped. */
  defer(write: () => void, committed?: () => void): void {
    this.waiting.push({ write, committed, resolve: ignore, reject: ignore });
    if (this.scheduled || this.deferred) return;
    this.deferred = later(() => {
      this.deferred = undefined;
      this.flush();
    }, DEFERRED_WRITE_MS);
    this.deferred.unref?.();
  }

  flush(): void {
    if (this.deferred) {
      cancelLater(this.deferred);
      this.deferred = undefined;
    }
    if (!this.waiting.length) return;
    const group = this.waiting;
    this.waiting = [];
    if (group.length === 1) {
      this.runAlone(group[0] as Waiting);
      return;
    }
    let results: unknown[];
    try {
      results = this.transaction(() => group.map((call) => call.write()));
    } catch {
      for (const call of group) this.runAlone(call);
      return;
    }
    for (const [n, call] of group.entries()) call.committed?.(results[n] as never);
    for (const [n, call] of group.entries()) call.resolve(results[n] as never);
  }

  private runAlone(call: Waiting): void {
    let result: never;
    try {
      result = this.transaction(call.write) as never;
    } catch (error) {
      call.reject(error);
      return;
    }
    call.committed?.(result);
    call.resolve(result);
  }
}
