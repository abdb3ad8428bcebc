import type { Context } from 'aws-lambda';
import type { LambdaTelemetry } from './lambda-telemetry.js';

/** Runs one invocation: the log lines carry its context, and its metrics are written before it returns. */
export async function invocation<T>(
  telemetry: LambdaTelemetry,
  context: Context | undefined,
  run: () => Promise<T>,
): Promise<T> {
  telemetry.startInvocation(context);
  try {
    return await run();
  } finally {
    telemetry.flush();
  }
}
