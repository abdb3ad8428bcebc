import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../api/http.js';
import { hostnameOf, isBoundAddress, isHostName, isLoopback } from './host-names.js';

/** Whom serve answers besides its loopback names and bound address: `--allow-host`, `--allow-origin`. */
export interface SourcePolicy {
  /** Lower-case host names, no port. */
  hosts: ReadonlySet<string>;
  /** Origins (`https://name[:port]`). */
  origins: ReadonlySet<string>;
}

/** The policy of serve's options; throws naming the first malformed entry. */
export function sourcePolicy(options: { allowHosts?: readonly string[]; allowOrigins?: readonly string[] }) {
  for (const host of options.allowHosts ?? []) {
    if (!isHostName(host))
      throw new Error(`--allow-host "${host}" is not a host name (a name or an address, without a port)`);
  }
  for (const origin of options.allowOrigins ?? []) {
    if (!isOrigin(origin))
      throw new Error(
        `--allow-origin "${origin}" is not an origin (http:// or https://, a name, a port if any)`,
      );
  }
  return {
    hosts: new Set((options.allowHosts ?? []).map((host) => host.replace(/^\[(.*)\]$/, '$1').toLowerCase())),
    origins: new Set((options.allowOrigins ?? []).map((origin) => new URL(origin).origin)),
  } satisfies SourcePolicy;
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.replace(/\/$/, '');
  } catch {
    return false;
  }
}

/**
 * Refuses what a page of another site could send through the visitor's browser. The `Host` must be a
 * name of this server, or a page on any name the attacker resolves to 127.0.0.1 (DNS rebinding) is
 * same-origin with serve; a browser's `Origin` must be serve's own or allowed; a browser's request
 * without one (`Sec-Fetch-Site`) must come from serve's own pages, unless it is a link followed.
 * Requests with none of these headers are not a browser's: curl and scripts pass.
 */
export function refuseForeignRequest(
  headers: IncomingHttpHeaders,
  policy: SourcePolicy,
  bound: string | undefined,
): void {
  const host = headers.host ?? '';
  refuseForeignHost(host, policy, bound);
  const origin = headers.origin;
  if (origin !== undefined) {
    if (!isOwnOrigin(origin, host) && !policy.origins.has(origin)) {
      throw new ApiError(
        'forbidden',
        `a request from the page at ${origin} is refused: only this server's own pages (http://${host}) and origins given with --allow-origin (SWITCHYARD_ALLOW_ORIGIN) may call it`,
      );
    }
    return;
  }
  const site = headers['sec-fetch-site'];
  if (
    site !== undefined &&
    site !== 'same-origin' &&
    site !== 'none' &&
    headers['sec-fetch-mode'] !== 'navigate'
  ) {
    throw new ApiError(
      'forbidden',
      `a ${site} request (Sec-Fetch-Site) is refused: only this server's own pages may call it, or origins given with --allow-origin`,
    );
  }
}

/**
 * `Host` headers found to name this server by what cannot change while it runs (a loopback name or
 * address, a name given with --allow-host), a set per policy: a client sends the same one on every
 * request. At most `KNOWN_HOSTS_KEPT` are kept, so a client cycling through 127.0.0.0/8 grows it no further.
 * The bound address is checked every time: a wildcard bind's addresses are the machine's, which change.
 */
const knownHosts = new WeakMap<SourcePolicy, Set<string>>();
const KNOWN_HOSTS_KEPT = 64;

function refuseForeignHost(host: string, policy: SourcePolicy, bound: string | undefined): void {
  const known = knownHosts.get(policy);
  if (known?.has(host)) return;
  const name = hostnameOf(host);
  if (name === undefined) throw new ApiError('bad_request', `the Host header "${host}" is not a host name`);
  if (isLoopback(name) || policy.hosts.has(name)) {
    if (!known) knownHosts.set(policy, new Set([host]));
    else if (known.size < KNOWN_HOSTS_KEPT) known.add(host);
    return;
  }
  if (!isBoundAddress(name, bound)) {
    throw new ApiError(
      'forbidden',
      `Host "${host}" is not a name of this server: it answers to localhost, loopback addresses, the address it is bound to and names given with --allow-host (SWITCHYARD_ALLOW_HOST)`,
    );
  }
}

function isOwnOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}
