/** A Lambda function's invocations as the simulation counts them. */
export interface Invocations {
  count: number;
  /** Billed milliseconds (each invocation rounded up to 1 ms), measured with the write probing off. */
  billedMs: number;
}

/**
 * Runs the simulation's Lambda invocations, counting each and its billed duration. On Lambda each
 * concurrent invocation has an execution environment, and its CPU, to itself; in the simulation they
 * share one process, so an invocation's wall time would also hold the other invocations' work (ten
 * concurrent job starts billed 109 ms each where one alone takes 12 to 14). While `oneAtATime` is on
 * they run in turn, each timed from when its turn comes: what the timing pass measures.
 */
export class InvocationRunner {
  oneAtATime = false;
  private turn: Promise<void> = Promise.resolve();

  run<T>(record: Invocations, call: () => Promise<T>): Promise<T> {
    if (!this.oneAtATime) return timed(record, call);
    const turn = this.turn.then(() => timed(record, call));
    this.turn = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }
}

async function timed<T>(record: Invocations, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await call();
  } finally {
    record.count++;
    record.billedMs += Math.max(1, Math.ceil(performance.now() - started));
  }
}
