import type { JsonObject } from '../../engine/index.js';
import type { ControlReply } from './control-replies.js';

export interface WorkerContext {
  /** The job's uuid (the part of the correlation id before the first colon). */
  jobId: string;
  /** The step's name (the part after it). */
  step: string;
  correlationId: string;
  /** The attempt this request belongs to (`x-attempt`), 1 when the request does not say. */
  attempt: number;
  /** Tells the manager the step is still being worked on: its reply deadline moves on by its `timeout`. */
  heartbeat(): Promise<void>;
  /**
   * This attempt's callback token (the request's `x-switchyard-token`; absent from a manager that
   * sends none). Whoever holds it may answer the attempt with `POST /api/callback/{token}`, as this
   * handler's reply would: hand it to another system and return `awaitCallback()` (protocol.md).
   */
  callbackToken?: string;
}

/** A handler's answer: the step's output (`null`/nothing: `{}`), or a control reply (`abort()`, `suspend()`). */
export type WorkerResult = JsonObject | ControlReply | null | undefined;

/**
 * Handles one request: gets the step's input, returns its output (the reply). Throw a `WorkerError`
 * to fail the attempt, `AbortJob` to end the job, `SuspendStep` to wait for a signal.
 *
 * `In` is what the handler expects of the input. The SDK checks only that the request is a JSON
 * object: the type is the handler's claim about the workflow, so check what you cannot trust.
 */
export type WorkerHandler<In extends JsonObject = JsonObject, Out extends WorkerResult = WorkerResult> = (
  input: In,
  context: WorkerContext,
) => Out | Promise<Out>;

export interface WorkerLogger {
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

export const consoleLogger: WorkerLogger = {
  info: (message, details) => (details ? console.info(message, details) : console.info(message)),
  warn: (message, details) => (details ? console.warn(message, details) : console.warn(message)),
  error: (message, details) => (details ? console.error(message, details) : console.error(message)),
};

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
