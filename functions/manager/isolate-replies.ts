import type { JobEvent } from '../../engine/index.js';
import type { Logger, Metrics } from '../telemetry/telemetry.js';
import type { JobEventInput } from './job-event-input.js';
import { HandBackTries, MAX_REASON } from './reply-policy.js';

/** What applying events tells about each (the manager's `EventOutcome`, as far as isolation needs it). */
export interface AppliedOutcome {
  applied: boolean;
}

export type ApplyEvents<T extends AppliedOutcome> = (inputs: readonly JobEventInput[]) => Promise<T[]>;

interface Unstorable {
  input: JobEventInput;
  correlationId: string;
  error: unknown;
}

/**
 * Applies a batch of reply events so that one bad reply never holds back another, as the poison-reply
 * policy says (reply-policy.ts: the tries, their bounds and what is recorded are its). The batch is
 * applied whole (one store round); if that throws, job by job; a job whose events throw, event by
 * event. An event that throws on its own is poison: its attempt fails with the reason, so the step
 * retries or fails as its settings say. One for which even that cannot be stored is logged, counted
 * and let go of (acknowledged) when something else in the batch was stored and its job can be read:
 * the store works, the reply is what it cannot take. Otherwise the store may be down: the batch is
 * handed back (the error is thrown), until a reply has had its share of tries (`HandBackTries`).
 */
export class ReplyIsolation {
  private readonly tries: HandBackTries;

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    /** Whether the store can read this job now: when it cannot, the store is in trouble, not the reply. */
    private readonly readable: (jobId: string) => Promise<boolean>,
    clock: () => number = Date.now,
  ) {
    this.tries = new HandBackTries(clock);
  }

  async apply<T extends AppliedOutcome>(
    inputs: readonly JobEventInput[],
    applyEvents: ApplyEvents<T>,
  ): Promise<(T | undefined)[]> {
    try {
      const outcomes = await applyEvents(inputs);
      if (this.tries.size) for (const input of inputs) this.tries.forget(keyOf(input));
      return outcomes;
    } catch (error) {
      if (inputs.length === 1) return this.alone(inputs, error, applyEvents);
      this.logger.warn('reply batch failed; handling it job by job', { error, size: inputs.length });
    }
    const outcomes: (T | undefined)[] = new Array(inputs.length);
    const unstorable: Unstorable[] = [];
    for (const indexes of byJob(inputs)) {
      const group = indexes.map((index) => inputs[index] as JobEventInput);
      let groupError: unknown;
      const results = await applyEvents(group).catch((error: unknown) => {
        groupError = error;
        return undefined;
      });
      if (results) {
        indexes.forEach((index, k) => {
          outcomes[index] = results[k];
        });
        continue;
      }
      // The store cannot even read the job: an outage, not a poison reply. Trying every other
      // reply, each with the store's own retries, would only take longer to say so.
      if (!(await this.readable(group[0]?.jobId as string))) throw groupError;
      for (const index of indexes) {
        const input = inputs[index] as JobEventInput;
        const result = await this.eventAlone(input, applyEvents, group.length === 1 ? groupError : undefined);
        if ('outcome' in result) outcomes[index] = result.outcome;
        else unstorable.push(result.unstorable);
      }
    }
    await this.settle(
      unstorable,
      outcomes.some((outcome) => outcome?.applied),
    );
    return outcomes;
  }

  private async alone<T extends AppliedOutcome>(
    inputs: readonly JobEventInput[],
    firstError: unknown,
    applyEvents: ApplyEvents<T>,
  ): Promise<(T | undefined)[]> {
    const input = inputs[0] as JobEventInput;
    if (!(await this.readable(input.jobId))) throw firstError;
    const result = await this.eventAlone(input, applyEvents, firstError);
    if ('outcome' in result) return [result.outcome];
    await this.settle([result.unstorable], false);
    return [undefined];
  }

  /** One event alone; if it throws, the failed attempt it stands for; if that throws too, why. */
  private async eventAlone<T extends AppliedOutcome>(
    input: JobEventInput,
    applyEvents: ApplyEvents<T>,
    knownError?: unknown,
  ): Promise<{ outcome: T | undefined } | { unstorable: Unstorable }> {
    let error = knownError;
    if (error === undefined) {
      try {
        return { outcome: (await applyEvents([input]))[0] };
      } catch (thrown) {
        error = thrown;
      }
    }
    const { jobId, event } = input;
    const step = stepOf(event);
    const correlationId = `${jobId}:${step ?? ''}`;
    if (step === undefined) return { unstorable: { input, correlationId, error } };
    const message = `the reply could not be stored: ${String(error).slice(0, MAX_REASON)}`;
    this.logger.error('reply could not be stored; its attempt fails instead', { correlationId, error });
    try {
      const failure: JobEvent = { type: 'failure', step, attempt: attemptOf(event), message };
      return { outcome: (await applyEvents([{ jobId, event: failure }]))[0] };
    } catch (failureError) {
      return { unstorable: { input, correlationId, error: failureError } };
    }
  }

  /** Lets go of the unstorable replies, or hands the batch back by throwing (see the class). */
  private async settle(unstorable: readonly Unstorable[], storeWorks: boolean): Promise<void> {
    let handBack: unknown;
    for (const item of unstorable) {
      const key = keyOf(item.input);
      const onlyThisReply = storeWorks && (await this.readable(item.input.jobId));
      const givenUp = this.tries.failed(key);
      if (!onlyThisReply && !givenUp) {
        handBack ??= item.error;
        continue;
      }
      this.tries.forget(key);
      this.metrics.count('replies_dropped_total');
      this.logger.error('reply dropped: neither it nor a failed attempt could be stored', {
        correlationId: item.correlationId,
        error: item.error,
      });
    }
    if (handBack !== undefined) throw handBack;
  }
}

/** Which reply it is, for counting its tries: its job, step, type and attempt. */
function keyOf({ jobId, event }: JobEventInput): string {
  return [jobId, stepOf(event) ?? '', event.type, attemptOf(event) ?? ''].join('\u0000');
}

/** The indexes of the inputs, grouped by job, in the order the jobs first appear. */
function byJob(inputs: readonly JobEventInput[]): number[][] {
  const groups = new Map<string, number[]>();
  inputs.forEach((input, index) => {
    const group = groups.get(input.jobId);
    if (group) group.push(index);
    else groups.set(input.jobId, [index]);
  });
  return [...groups.values()];
}

function stepOf(event: JobEvent): string | undefined {
  return 'step' in event && typeof event.step === 'string' ? event.step : undefined;
}

function attemptOf(event: JobEvent): number | undefined {
  return 'attempt' in event && typeof event.attempt === 'number' ? event.attempt : undefined;
}
