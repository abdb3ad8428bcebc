import type { Server, ServerOptions } from 'node:http';
import type { Logger } from '../telemetry/telemetry.js';

/** How long serve's HTTP server lets a connection hold a descriptor, and how many it holds at once. */
export interface HttpBounds {
  /**
   * A connection must have sent a request's headers this long after it opened, or after its
   * previous response, once its next request has begun (`--headers-timeout`). @default 10000
   */
  headersTimeoutMs: number;
  /** A request, headers and body, must have arrived this long after it began (`--request-timeout`). @default 30000 */
  requestTimeoutMs: number;
  /** A kept-alive connection is closed after this long without a next request (`--keep-alive-timeout`). @default 5000 */
  keepAliveTimeoutMs: number;
  /** Connections held at once; those over it are closed as soon as they are accepted (`--max-connections`). @default 1000 */
  maxConnections: number;
}

export const DEFAULT_HTTP_BOUNDS: HttpBounds = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
};

/** The flag that sets each bound, for the messages that name one. */
const FLAGS: Record<keyof HttpBounds, string> = {
  headersTimeoutMs: '--headers-timeout',
  requestTimeoutMs: '--request-timeout',
  keepAliveTimeoutMs: '--keep-alive-timeout',
  maxConnections: '--max-connections',
};

/** The defaults with `given` over them; throws naming the flag of a bound that is not one. */
export function httpBounds(given: Partial<HttpBounds> = {}): HttpBounds {
  const bounds = { ...DEFAULT_HTTP_BOUNDS };
  for (const [key, value] of Object.entries(given) as [keyof HttpBounds, number | undefined][]) {
    if (value === undefined) continue;
    // 0 would mean no bound at all to node:http.
    if (!Number.isInteger(value) || value < 1)
      throw new Error(
        `${FLAGS[key]} must be at least 1${key === 'maxConnections' ? '' : ' ms'}, got ${value}`,
      );
    bounds[key] = value;
  }
  if (bounds.headersTimeoutMs > bounds.requestTimeoutMs) {
    throw new Error(
      `--headers-timeout (${bounds.headersTimeoutMs} ms) must not be longer than --request-timeout (${bounds.requestTimeoutMs} ms)`,
    );
  }
  return bounds;
}

/** What node:http enforces itself: the headers and request deadlines and the keep-alive timeout. */
export function serverOptions(bounds: HttpBounds): ServerOptions {
  return {
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    keepAliveTimeout: bounds.keepAliveTimeoutMs,
    // node:http looks for requests past their deadline every 30 s by default, which would let one live
    // 30 s longer than its deadline; a look is one walk over the connections in a request.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(bounds.headersTimeoutMs / 2))),
  };
}

/** While connections are refused at the cap, one log line at most this often, with how many. */
const DROP_LOG_INTERVAL_MS = 10_000;

/**
 * The cap on connections, logged when it refuses some. The timeouts are node:http's own
 * (`serverOptions`): its headers deadline runs from a connection's opening, or from its request's
 * first byte on a kept-alive one, so a connection that never sends a byte is closed at it too; a
 * request whose body has arrived is not timed (a long poll waiting for a job's change answers when
 * its wait ends), and the keep-alive timeout covers the wait for the next request.
 */
export function enforceBounds(server: Server, bounds: HttpBounds, logger: Logger, name = 'HTTP'): void {
  server.maxConnections = bounds.maxConnections;
  let refused = 0;
  let loggedAt = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    refused += 1;
    const now = Date.now();
    if (now - loggedAt < DROP_LOG_INTERVAL_MS) return;
    logger.warn(`${name} connections refused: serve holds its most connections`, {
      maxConnections: bounds.maxConnections,
      refused,
    });
    loggedAt = now;
    refused = 0;
  });
}
