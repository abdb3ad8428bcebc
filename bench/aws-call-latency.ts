import { delay } from './child.js';

/**
 * The time AWS takes to answer one call: while the invocations are timed, each call the manager's
 * functions make lasts at least this long, the emulator's own answer counted toward it. The
 * emulators answer on this machine's loopback in 1 to 3 ms, more while the machine is busy; AWS says
 * that for "most atomic operations, such as GetItem and PutItem, you can expect an average latency
 * in single-digit milliseconds" (https://repost.aws/knowledge-center/dynamodb-high-latency), which
 * counts DynamoDB's own time and not the network. It publishes no such figure for SQS; the same is
 * assumed. A Lambda function is billed for the time it waits on these calls, so without them the
 * timed invocations would be billed as if AWS answered as fast as a process on the same machine.
 * `BENCH_AWS_CALL_MS` sets another value (0: the emulators' own time only).
 */
export const AWS_CALL_MS = Number(process.env.BENCH_AWS_CALL_MS ?? 10);

interface WithMiddleware {
  middlewareStack: {
    add(
      middleware: (next: (args: never) => Promise<unknown>) => (args: never) => Promise<unknown>,
      options: { step: 'finalizeRequest'; name: string },
    ): void;
  };
}

/**
 * The time during which at least one AWS call was under way: what an invocation waits on AWS, its
 * concurrent calls counted once.
 */
export class AwsWaitClock {
  private underWay = 0;
  private since = 0;
  private waited = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  begin(): void {
    if (this.underWay++ === 0) this.since = this.now();
  }

  end(): void {
    if (--this.underWay === 0) this.waited += this.now() - this.since;
  }

  /** Milliseconds waited so far, a wait under way included. */
  waitedMs(): number {
    return this.waited + (this.underWay > 0 ? this.now() - this.since : 0);
  }
}

/** Makes each call `client` sends while `on()` holds last at least `ms`, each timed on `waits`. */
export function addCallLatency(
  client: WithMiddleware,
  ms: number,
  on: () => boolean,
  waits: AwsWaitClock,
): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      if (!on()) return next(args);
      waits.begin();
      try {
        const started = performance.now();
        const answer = await next(args);
        const left = ms - (performance.now() - started);
        if (left > 0) await delay(left);
        return answer;
      } finally {
        waits.end();
      }
    },
    { step: 'finalizeRequest', name: 'simulatedAwsCallLatency' },
  );
}
