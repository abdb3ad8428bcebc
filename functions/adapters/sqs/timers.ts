import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { EveryField, Timer, TimerKind, TimerScheduler } from '../../../engine/index.js';
import { SQS_MAX_BATCH_ENTRIES } from '../../transport/sqs/message.js';

/** SQS delays a message by at most 15 minutes; a timer further out is sent again when it arrives early. */
export const MAX_DELAY_SECONDS = 900;

export interface SqsTimersOptions {
  client: SQSClient;
  /** The timer queue (the stack's `<prefix>switchyard-timers`). */
  queueUrl: string;
  /** @default Date.now */
  clock?: () => number;
  /** SendMessageBatch calls in flight at once. @default 8 */
  maxConcurrentBatches?: number;
  /** A timer that could not be sent: the timers function's sweep fires it from the store instead. */
  onError?: (error: Error, timers: readonly Timer[]) => void;
}

/**
 * Deadlines as delayed messages on the timer queue, for Lambda (the TimerScheduler port). Every timer
 * is stored with its transition before it is armed here, so a message that is lost, or never sent,
 * costs at most the minute until the sweep finds it due in the store. `arm` therefore never throws:
 * a failure is reported to `onError` and left to the sweep. `disarm` does nothing: a message for a
 * timer that was cleared or moved arrives, and the engine ignores it as stale.
 */
export class SqsTimers implements TimerScheduler {
  private readonly client: SQSClient;
  private readonly queueUrl: string;
  private readonly clock: () => number;
  private readonly maxConcurrentBatches: number;
  private readonly onError: (error: Error, timers: readonly Timer[]) => void;

  constructor(options: SqsTimersOptions) {
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.clock = options.clock ?? Date.now;
    this.maxConcurrentBatches = Math.max(1, options.maxConcurrentBatches ?? 8);
    this.onError = options.onError ?? (() => {});
  }

  async arm(timers: readonly Timer[]): Promise<void> {
    for (const failure of await this.send(timers)) this.onError(failure.error, failure.timers);
  }

  async disarm(): Promise<void> {}

  /**
   * Sends timers again with a new delay (one that arrived before it was due, being more than 15
   * minutes out). Unlike `arm`, fails when any is not sent, so that the caller's message comes back.
   */
  async resend(timers: readonly Timer[]): Promise<void> {
    const failures = await this.send(timers);
    if (failures.length > 0) {
      throw new AggregateError(
        failures.map((failure) => failure.error),
        failures.map((failure) => failure.error.message).join('; '),
      );
    }
  }

  private async send(timers: readonly Timer[]): Promise<SendFailure[]> {
    const batches: Timer[][] = [];
    for (let start = 0; start < timers.length; start += SQS_MAX_BATCH_ENTRIES) {
      batches.push(timers.slice(start, start + SQS_MAX_BATCH_ENTRIES));
    }
    const failures: SendFailure[] = [];
    let next = 0;
    const lanes = Array.from({ length: Math.min(this.maxConcurrentBatches, batches.length) }, async () => {
      while (next < batches.length) {
        const failure = await this.sendBatch(batches[next++] as Timer[]);
        if (failure) failures.push(failure);
      }
    });
    await Promise.all(lanes);
    return failures;
  }

  private async sendBatch(timers: readonly Timer[]): Promise<SendFailure | undefined> {
    const now = this.clock();
    const entries: SendMessageBatchRequestEntry[] = timers.map((timer, index) => ({
      Id: `t${index}`,
      MessageBody: encodeTimer(timer),
      DelaySeconds: delaySeconds(timer.at, now),
    }));
    try {
      const result = await this.client.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
      );
      const failed = result.Failed ?? [];
      if (failed.length === 0) return undefined;
      const lost = failed.map((entry) => timers[Number(entry.Id?.slice(1))]).filter((t) => t !== undefined);
      const reasons = [...new Set(failed.map((entry) => `${entry.Code}: ${entry.Message}`))].join('; ');
      return {
        error: new Error(`SQS did not take ${failed.length} timer message(s): ${reasons}`),
        timers: lost,
      };
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { error: new Error(`sending ${timers.length} timer message(s) failed: ${reason}`), timers };
    }
  }
}

interface SendFailure {
  error: Error;
  timers: readonly Timer[];
}

/** Whole seconds until `at` (rounded up, so the message never arrives before it), at most 15 minutes. */
export function delaySeconds(at: number, now: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((at - now) / 1000)));
}

/**
 * A timer message's body: the timer's fields, each named (`EveryField`, as in `decodeTimer`), so a
 * field added to Timer fails tsc here until the message carries it.
 */
export function encodeTimer(timer: Timer): string {
  return JSON.stringify({
    jobId: timer.jobId,
    step: timer.step,
    kind: timer.kind,
    attempt: timer.attempt,
    at: timer.at,
  } satisfies EveryField<Timer>);
}

const KINDS = new Set<TimerKind>(['attempt', 'retry', 'job', 'start']);

/** A timer message's body back as a Timer; undefined when it is not one (it is then dropped). */
export function decodeTimer(body: string): Timer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { jobId, step, kind, attempt, at } = value as Record<string, unknown>;
  if (typeof jobId !== 'string' || jobId === '') return undefined;
  if (step !== null && typeof step !== 'string') return undefined;
  if (typeof kind !== 'string' || !KINDS.has(kind as TimerKind)) return undefined;
  if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 0) return undefined;
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  return { jobId, step, kind: kind as TimerKind, attempt, at } satisfies EveryField<Timer>;
}
