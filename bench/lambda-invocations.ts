import type { AwsWaitClock } from './aws-call-latency.js';

/**
 * Lambda's CPU for a function's memory: "At 1,769 MB, a function has the equivalent of one vCPU
 * (one vCPU-second of credits per second)", in proportion below that
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). A Node.js handler runs
 * on one thread, so more memory than this does not make it faster.
 */
export const MEMORY_MB_PER_VCPU = 1_769;

/** How much longer the function's own work takes on Lambda at `memoryMb` than on one core here. */
export const cpuStretch = (memoryMb: number): number => Math.max(1, MEMORY_MB_PER_VCPU / memoryMb);

/** A Lambda function's invocations as the simulation counts them. */
export interface Invocations {
  count: number;
  /**
   * Billed milliseconds (each invocation rounded up to 1 ms), measured with the write probing off:
   * the time it waited on AWS's calls, plus its own work stretched to the CPU Lambda gives its memory.
   */
  billedMs: number;
  /** Of the invocations' time here, what they spent waiting on AWS's calls (absent in older results). */
  awsWaitMs?: number;
  /** … and the rest: the function's own work, on one core of this machine (absent in older results). */
  ownMs?: number;
}

export const noInvocations = (): Required<Invocations> => ({ count: 0, billedMs: 0, awsWaitMs: 0, ownMs: 0 });

/**
 * Runs the simulation's Lambda invocations, counting each and its billed duration. On Lambda each
 * concurrent invocation has an execution environment, and its CPU, to itself; in the simulation they
 * share one process, so an invocation's wall time would also hold the other invocations' work (ten
 * concurrent job starts billed 109 ms each where one alone takes 12 to 14). While `oneAtATime` is on
 * they run in turn, each timed from when its turn comes: what the timing pass measures. Of each
 * invocation's time, what `waits` saw spent on AWS's calls is billed as it is, and the rest is
 * stretched by `cpuStretch` of the function's memory.
 */
export class InvocationRunner {
  oneAtATime = false;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly waits: AwsWaitClock,
    private readonly now: () => number = () => performance.now(),
  ) {}

  run<T>(record: Invocations, memoryMb: number, call: () => Promise<T>): Promise<T> {
    if (!this.oneAtATime) return this.timed(record, memoryMb, call);
    const turn = this.turn.then(() => this.timed(record, memoryMb, call));
    this.turn = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }

  private async timed<T>(record: Invocations, memoryMb: number, call: () => Promise<T>): Promise<T> {
    const started = this.now();
    const waitedBefore = this.waits.waitedMs();
    try {
      return await call();
    } finally {
      const wall = this.now() - started;
      const waited = Math.min(wall, this.waits.waitedMs() - waitedBefore);
      const own = wall - waited;
      record.count++;
      record.awsWaitMs = (record.awsWaitMs ?? 0) + waited;
      record.ownMs = (record.ownMs ?? 0) + own;
      record.billedMs += Math.max(1, Math.ceil(waited + own * cpuStretch(memoryMb)));
    }
  }
}
