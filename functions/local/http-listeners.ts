import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiDeps } from '../api/router.js';
import type { HttpBounds } from './http-bounds.js';
import { createHealthBridge, createHttpBridge } from './http-bridge.js';
import type { SourcePolicy } from './request-source.js';

/** Connections the health listener holds at once: a health checker needs one or two. */
export const HEALTH_MAX_CONNECTIONS = 16;

export interface HttpListenersOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The health listener's port on the same host (0 picks a free one); none when undefined. */
  healthPort?: number;
  bounds: HttpBounds;
  policy: SourcePolicy;
}

export interface HttpListeners {
  url: string;
  /** The health listener's URL, when there is one. */
  healthUrl?: string;
  /**
   * Stops accepting and closes idle connections; those still in a request after `graceMs` (one
   * trickling its headers, a response not yet read) are closed then.
   */
  close(graceMs: number): Promise<void>;
}

/** serve's API listener, and its health listener when `healthPort` is given. */
export async function listenHttp(deps: ApiDeps, options: HttpListenersOptions): Promise<HttpListeners> {
  const { host, bounds, policy } = options;
  const api = createHttpBridge(deps, policy, bounds);
  const servers: Server[] = [api];
  try {
    const url = await listen(api, options.port, host);
    if (options.healthPort === undefined) return { url, close: (graceMs) => closeAll(servers, graceMs) };
    const health = createHealthBridge(deps, policy, { ...bounds, maxConnections: HEALTH_MAX_CONNECTIONS });
    servers.push(health);
    const healthUrl = await listen(health, options.healthPort, host);
    return { url, healthUrl, close: (graceMs) => closeAll(servers, graceMs) };
  } catch (error) {
    await closeAll(servers, 0);
    throw error;
  }
}

async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

function closeAll(servers: readonly Server[], graceMs: number): Promise<void> {
  return Promise.all(servers.map((server) => close(server, graceMs))).then(() => undefined);
}

async function close(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}
