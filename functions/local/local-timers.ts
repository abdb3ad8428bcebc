import { type Timer, type TimerKey, type TimerScheduler, timerId } from '../../engine/index.js';

/** setTimeout cannot wait longer than this; longer timers wake up and wait again. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * Deadlines as in-process timers, for the local host. They are stored with each transition, so on a
 * restart the host re-arms them from the store (`rearmTimers` in serve.ts). Timers that come due
 * together fire as one batch.
 */
export class LocalTimers implements TimerScheduler {
  private readonly handles = new Map<string, NodeJS.Timeout>();
  private due: Timer[] = [];
  private flushScheduled = false;
  private stopped = false;

  constructor(
    private readonly fire: (timers: Timer[]) => Promise<void>,
    private readonly clock: () => number = Date.now,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async arm(timers: readonly Timer[]): Promise<void> {
    for (const timer of timers) this.schedule(timer);
  }

  async disarm(keys: readonly TimerKey[]): Promise<void> {
    for (const key of keys) {
      const id = timerId(key);
      clearTimeout(this.handles.get(id));
      this.handles.delete(id);
    }
  }

  get armed(): number {
    return this.handles.size;
  }

  stop(): void {
    this.stopped = true;
    for (const handle of this.handles.values()) clearTimeout(handle);
    this.handles.clear();
  }

  private schedule(timer: Timer): void {
    if (this.stopped) return;
    const id = timerId(timer);
    clearTimeout(this.handles.get(id));
    const delay = Math.max(0, timer.at - this.clock());
    const handle = setTimeout(
      () => {
        this.handles.delete(id);
        // setTimeout runs on a monotonic millisecond clock and may wake a millisecond before `at` by
        // this clock (Date.now); the engine would ignore such a timer as stale, so wait the rest.
        if (timer.at > this.clock()) return this.schedule(timer);
        this.due.push(timer);
        this.scheduleFlush();
      },
      Math.min(delay, MAX_DELAY),
    );
    handle.unref();
    this.handles.set(id, handle);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const batch = this.due;
      this.due = [];
      this.fire(batch).catch((error) => {
        this.onError(error);
        // Not lost: try again shortly.
        for (const timer of batch) this.schedule({ ...timer, at: this.clock() + 1000 });
      });
    });
  }
}
