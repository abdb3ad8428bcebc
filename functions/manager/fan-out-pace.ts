/**
 * How many children a fan-out may create now, so that the invocation it runs in ends on time: a Lambda
 * invocation has a deadline, and a slice of children costs its commit (one item per child) and the
 * send of their requests. The pace measures both as they happen (a moving average per child) and
 * sizes each slice to what is left before the deadline, keeping half of it back; a slice that does
 * not fit waits for the next invocation (`mayCreate`). Without a deadline (serve) every slice is
 * `maxSlice`.
 */
export interface FanOutPaceOptions {
  /** The most children of one slice (FAN_OUT_SLICE), whatever the time left. */
  maxSlice: number;
  /** A slice smaller than this waits for an invocation with more time. @default 50 */
  minSlice?: number;
  /** What a child costs before anything is measured: commit and send, ms. @default 6 */
  initialMsPerChild?: number;
  clock?: () => number;
}

/** Weight of the newest measure in the moving averages. */
const NEWEST_WEIGHT = 0.3;
/** Only this share of the time left is planned for: commits and sends vary from one slice to the next. */
const SHARE_OF_TIME_LEFT = 0.5;

export class FanOutPace {
  private deadline?: number;
  private commitMsPerChild: number;
  private sendMsPerRequest: number;
  private readonly clock: () => number;

  constructor(private readonly options: FanOutPaceOptions) {
    const initial = options.initialMsPerChild ?? 6;
    this.commitMsPerChild = initial / 2;
    this.sendMsPerRequest = initial / 2;
    this.clock = options.clock ?? Date.now;
  }

  /** The invocation's deadline (ms since the epoch, its own margin taken off already); undefined: none. */
  setDeadline(deadline: number | undefined): void {
    this.deadline = deadline;
  }

  /** What one child costs, as measured so far: ms. */
  get msPerChild(): number {
    return this.commitMsPerChild + this.sendMsPerRequest;
  }

  /** Children the next transition may create: `maxSlice`, fewer near the deadline (0: none fit). */
  slice(): number {
    const max = Math.max(1, Math.floor(this.options.maxSlice));
    if (this.deadline === undefined) return max;
    const left = Math.max(0, this.deadline - this.clock()) * SHARE_OF_TIME_LEFT;
    return Math.min(max, Math.floor(left / this.msPerChild));
  }

  /** Whether a further slice fits in this invocation; when not, it waits for the next one. */
  mayCreate(): boolean {
    return this.slice() >= Math.min(this.options.minSlice ?? 50, Math.max(1, this.options.maxSlice));
  }

  /** A commit that created `children` took `ms`. */
  committed(children: number, ms: number): void {
    if (children > 0) this.commitMsPerChild = average(this.commitMsPerChild, ms / children);
  }

  /** A send of `requests` took `ms`. */
  sent(requests: number, ms: number): void {
    if (requests > 0) this.sendMsPerRequest = average(this.sendMsPerRequest, ms / requests);
  }
}

function average(previous: number, newest: number): number {
  return previous * (1 - NEWEST_WEIGHT) + newest * NEWEST_WEIGHT;
}
