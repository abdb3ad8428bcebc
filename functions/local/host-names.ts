import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An address or name that always means this machine: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopback(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  const family = isIP(bare);
  return family !== 0 && loopback.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}

const NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

/** A DNS name or an IP address (IPv6 with or without brackets), with no port. */
export function isHostName(value: string): boolean {
  return NAME.test(value) || isIP(value.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

/** The name of a `Host` header, lower-case, without its port and brackets; undefined when malformed. */
export function hostnameOf(header: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(:\d{1,5})?$/i.exec(header.trim());
  const name = match?.[1]?.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return name !== undefined && isHostName(name) ? name : undefined;
}

/** Whether `address` (from a `Host` header) is the address serve is bound to, or one of the machine's under a wildcard bind. */
export function isBoundAddress(address: string, bound: string | undefined): boolean {
  if (bound === undefined || isIP(address) === 0) return false;
  if (sameAddress(address, bound)) return true;
  if (bound !== '0.0.0.0' && bound !== '::') return false;
  return Object.values(networkInterfaces())
    .flat()
    .some((entry) => entry !== undefined && sameAddress(address, entry.address));
}

function sameAddress(a: string, b: string): boolean {
  const list = new BlockList();
  const family = isIP(b);
  if (family === 0) return false;
  list.addAddress(b, family === 6 ? 'ipv6' : 'ipv4');
  return list.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
}
