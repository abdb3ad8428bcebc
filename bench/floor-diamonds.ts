import { randomUUID } from 'node:crypto';
import type { StepRequest } from '../engine/index.js';

/*
 * What every floor manager (bench/floor-manager*.ts) does but speak AMQP: the diamonds it keeps
 * running, what each reply makes ready to send, and the protocol with bench/broker-floor.ts (warm
 * up, print `warm`, run the measured diamonds on SIGUSR2, print `done <wall seconds>`, close on
 * SIGTERM).
 *
 * Environment: BENCH_JOBS (measured diamonds), BENCH_WARM_JOBS, BENCH_IN_FLIGHT (diamonds running
 * at once).
 */

export type DiamondStep = 's1' | 's2' | 's3' | 's4';

/** The diamonds in flight: s2 and s3 are sent after s1's reply, s4 once both have replied. */
export class FloorDiamonds {
  /** Steps of a running diamond not replied to yet. */
  private readonly running = new Map<string, Set<string>>();
  private toStart = 0;
  private finished = 0;
  private onAllFinished: (() => void) | undefined;

  /** `queues`: each step's queue; `send`: hands a step's request to the caller's batch. */
  constructor(
    private readonly inFlight: number,
    private readonly queues: Record<DiamondStep, string>,
    private readonly sendRequest: (request: StepRequest) => void,
  ) {}

  private send(jobId: string, step: DiamondStep): void {
    this.sendRequest({
      jobId,
      step,
      queue: this.queues[step],
      vhost: null,
      correlationId: `${jobId}:${step}`,
      attempt: 1,
      body: {},
    });
  }

  /** Starts diamonds while fewer than `inFlight` run and some are left to start. */
  startMore(): void {
    while (this.toStart > 0 && this.running.size < this.inFlight) {
      this.toStart--;
      const id = randomUUID();
      this.running.set(id, new Set(['s1']));
      this.send(id, 's1');
    }
  }

  /** A reply (`<job id>:<step>`): sends what it makes ready; a reply for no awaited step is ignored. */
  replied(correlationId: string): void {
    const [jobId = '', step = ''] = correlationId.split(':');
    const waiting = this.running.get(jobId);
    if (!waiting?.delete(step)) return;
    if (step === 's1') {
      waiting.add('s2').add('s3');
      this.send(jobId, 's2');
      this.send(jobId, 's3');
    } else if ((step === 's2' || step === 's3') && waiting.size === 0) {
      waiting.add('s4');
      this.send(jobId, 's4');
    } else if (step === 's4') {
      this.running.delete(jobId);
      this.finished++;
    }
  }

  /** After a batch's requests are sent: ends the run when nothing runs and nothing is left to start. */
  batchSent(): void {
    if (this.running.size === 0 && this.toStart === 0) this.onAllFinished?.();
  }

  /**
   * Runs `count` diamonds; `sendStarted` sends the first batch (what `startMore` handed to `send`).
   * Resolves with the wall seconds once every one has finished.
   */
  async run(count: number, sendStarted: () => Promise<void>): Promise<number> {
    const began = process.hrtime.bigint();
    this.finished = 0;
    this.toStart = count;
    const allFinished = new Promise<void>((resolve) => {
      this.onAllFinished = resolve;
    });
    this.startMore();
    await sendStarted();
    await allFinished;
    if (this.finished !== count) throw new Error(`${this.finished} of ${count} diamonds finished`);
    return Number(process.hrtime.bigint() - began) / 1e9;
  }
}

export const floorSettings = (env: NodeJS.ProcessEnv = process.env) => ({
  measuredJobs: Number(env.BENCH_JOBS ?? 10_000),
  warmJobs: Number(env.BENCH_WARM_JOBS ?? 3_000),
  inFlight: Number(env.BENCH_IN_FLIGHT ?? 100),
});

/**
 * Warms up with `warmJobs` diamonds, prints `warm`, runs the measured ones on SIGUSR2 and prints
 * `done <seconds>`; on SIGTERM, `close` and exit.
 */
export async function serveFloorRuns(
  run: (count: number) => Promise<number>,
  close: () => Promise<void>,
  settings: ReturnType<typeof floorSettings>,
): Promise<void> {
  await run(settings.warmJobs);
  process.once('SIGUSR2', () => {
    run(settings.measuredJobs).then(
      (seconds) => process.stdout.write(`done ${seconds}\n`),
      (error: unknown) => {
        process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
  });
  process.once('SIGTERM', () => {
    close().finally(() => process.exit(0));
  });
  process.stdout.write('warm\n');
}
