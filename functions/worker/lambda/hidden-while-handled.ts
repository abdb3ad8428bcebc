/** The longest visibility timeout SQS takes: 12 hours. */
const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * How long after the invocation's deadline a message that is still hidden comes back, should the
 * function die with it (a timeout, running out of memory): soon enough for a retry, late enough that
 * Lambda's own deletion after a success never races it.
 */
export const BACK_AFTER_DEADLINE_SECONDS = 10;

/** The visibility timeout that keeps a message hidden until `deadline` (epoch ms), and a little after. */
export function hiddenUntilDeadline(deadline: number, now: number): number {
  const seconds = Math.ceil(Math.max(0, deadline - now) / 1000) + BACK_AFTER_DEADLINE_SECONDS;
  return Math.min(SQS_MAX_VISIBILITY_SECONDS, seconds);
}

export interface HiddenWhileHandled {
  /** Extends the message's visibility now (the handler's `heartbeat()`). */
  extend(): Promise<void>;
  stop(): void;
}

/**
 * The heartbeat of a long step on Lambda: once its handler has run for `everyMs`, the message's
 * visibility timeout is moved to the invocation's deadline (plus BACK_AFTER_DEADLINE_SECONDS), so
 * SQS does not deliver it to another invocation while this one works on it, whatever the queue's
 * visibility timeout and however long the event source held the message before the invocation.
 * The deadline is known and fixed, so one extension that succeeds is enough; a failed one is tried
 * again at the next tick (bounded by the invocation).
 */
export function keepHiddenWhileHandled(options: {
  deadline: number;
  everyMs: number;
  changeVisibility: (seconds: number) => Promise<void>;
  onError: (error: unknown) => void;
}): HiddenWhileHandled {
  let extended = false;
  let stopped = false;
  const extend = async (): Promise<void> => {
    await options.changeVisibility(hiddenUntilDeadline(options.deadline, Date.now()));
    extended = true;
  };
  const timer = setInterval(() => {
    if (extended || stopped) return;
    extend().catch(options.onError);
  }, options.everyMs);
  return {
    extend,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
