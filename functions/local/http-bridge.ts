import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleApiRequest } from '../api/api-handler.js';
import { ApiError, errorResponse, type HostRequest, type StreamSink } from '../api/http.js';
import type { ApiDeps } from '../api/router.js';
import { withSecurityHeaders } from '../api/security-headers.js';
import { DEFAULT_HTTP_BOUNDS, enforceBounds, type HttpBounds, serverOptions } from './http-bounds.js';
import { refuseForeignRequest, type SourcePolicy, sourcePolicy } from './request-source.js';
import { pathAndQuery } from './request-target.js';

/**
 * Serves the API on node:http: each request goes to the same `handleApiRequest` the deployed API
 * function hands its API Gateway events to, so both runtimes run the same routes. Before that, what
 * only a local server must check: that the request names this server and is not another site's.
 * The server holds at most `bounds.maxConnections`, each within the bounds' timeouts.
 */
export function createHttpBridge(
  deps: ApiDeps,
  policy: SourcePolicy = sourcePolicy({}),
  bounds: HttpBounds = DEFAULT_HTTP_BOUNDS,
): Server {
  return bridge(deps, policy, bounds, 'HTTP', () => {});
}

/** The path the health listener answers; every other is 404 there. */
const HEALTH_PATH = '/healthz';

/**
 * The health listener (`serve --health-port`): `/healthz` alone, on a port of its own with a cap of
 * its own, so that a flood holding every connection of the API's port cannot silence it.
 */
export function createHealthBridge(deps: ApiDeps, policy: SourcePolicy, bounds: HttpBounds): Server {
  return bridge(deps, policy, bounds, 'health', (request) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== HEALTH_PATH)
      throw new ApiError('not_found', `this port answers ${HEALTH_PATH} only`);
  });
}

function bridge(
  deps: ApiDeps,
  policy: SourcePolicy,
  bounds: HttpBounds,
  name: string,
  refusePath: (request: IncomingMessage) => void,
): Server {
  // The address is read once it is bound, not per request (each read is a system call).
  let bound: string | undefined;
  const server = createServer(serverOptions(bounds), (request, response) => {
    void serve(request, response, deps, () => {
      refuseForeignRequest(request.headers, policy, bound);
      refusePath(request);
    });
  });
  enforceBounds(server, bounds, deps.logger, name);
  server.on('listening', () => {
    bound = (server.address() as AddressInfo | null)?.address;
  });
  return server;
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  deps: ApiDeps,
  refuse: () => void,
): Promise<void> {
  try {
    refuse();
    const body = await readBody(request, deps.maxBodyBytes);
    const result = await handleApiRequest(toApiRequest(request, body), deps);
    if (result.stream) {
      response.writeHead(result.status, result.headers);
      result.stream(streamSink(response));
      return;
    }
    // With its length declared, the response leaves in one write instead of as chunks.
    const length =
      request.method === 'HEAD' ? {} : { 'content-length': String(Buffer.byteLength(result.body)) };
    response.writeHead(result.status, { ...result.headers, ...length });
    response.end(result.body);
  } catch (error) {
    const failure = withSecurityHeaders(errorResponse(error));
    request.resume();
    if (!response.headersSent)
      response.writeHead(failure.status, { ...failure.headers, connection: 'close' });
    response.end(failure.body);
  }
}

/** The most bytes a stream's client may leave unread before it is dropped. */
export const MAX_STREAM_BUFFER_BYTES = 1024 * 1024;

function streamSink(response: ServerResponse): StreamSink {
  return {
    write: (text) => {
      response.write(text);
      return response.writableLength <= MAX_STREAM_BUFFER_BYTES;
    },
    end: () => response.end(),
    drop: () => response.destroy(),
    onClose: (handler) => {
      response.once('close', handler);
    },
  };
}

/** Reads at most `limit` bytes; a larger body is refused without buffering it. */
function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.reject(
      new ApiError('payload_too_large', `the body is ${declared} bytes; the limit is ${limit}`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        reject(
          new ApiError('payload_too_large', `the body is more than ${limit} bytes; the limit is ${limit}`),
        );
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** node:http's request as the API handler takes it: lower-case header names, every query value given. */
function toApiRequest(request: IncomingMessage, body: string): HostRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { method: request.method ?? 'GET', ...pathAndQuery(request.url ?? '/'), headers, body };
}
