/**
 * How long one AWS SDK call of a handler may take. Without these the SDK waits for ever: a
 * connection to an endpoint the function cannot reach (a VPC without the service's endpoint) hangs
 * until Lambda kills the invocation, and the log says only "Task timed out".
 */
export interface SdkTimeouts {
  /** To open the TCP connection (and finish TLS). */
  connectionMs: number;
  /** From sending the request to the last byte of the response. */
  requestMs: number;
  /** Attempts per call, the first included (the SDK's standard retry mode). */
  maxAttempts: number;
}

/** The manager's functions (API 29 s, the others 60 s and more). */
export const HANDLER_SDK_TIMEOUTS: SdkTimeouts = { connectionMs: 2_000, requestMs: 5_000, maxAttempts: 3 };

/** The API authorizer (10 s): a caller waits for it, so it gives up sooner. */
export const AUTHORIZER_SDK_TIMEOUTS: SdkTimeouts = { connectionMs: 1_000, requestMs: 2_000, maxAttempts: 2 };

/**
 * The SDK's standard retry mode waits up to 2^attempt × 100 ms between attempts (× 500 ms after a
 * throttling error), with jitter: at most 2 s between the few attempts above.
 */
const MAX_BACKOFF_MS = 2_000;

/**
 * The longest one call can take with `timeouts`: every attempt timing out, with the longest backoff
 * between them. A function's timeout must be longer (test/infra/sdk-timeouts.test.ts).
 */
export function longestSdkCallMs(timeouts: SdkTimeouts): number {
  const attempt = timeouts.connectionMs + timeouts.requestMs;
  return timeouts.maxAttempts * attempt + (timeouts.maxAttempts - 1) * MAX_BACKOFF_MS;
}

/**
 * The configuration every SDK client a handler builds starts from. `throwOnRequestTimeout`: without
 * it a request past `requestTimeout` only logs a warning and goes on waiting.
 */
export function sdkClientConfig(timeouts: SdkTimeouts = HANDLER_SDK_TIMEOUTS) {
  return {
    maxAttempts: timeouts.maxAttempts,
    requestHandler: {
      connectionTimeout: timeouts.connectionMs,
      requestTimeout: timeouts.requestMs,
      throwOnRequestTimeout: true,
    },
  };
}
