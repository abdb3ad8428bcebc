import { lookup } from 'node:dns/promises';
import { isLoopback } from './host-names.js';

/**
 * Without a token the API is open to whoever reaches it: fine on loopback only. A host that does not
 * resolve is left for `listen` to refuse.
 */
export async function refuseOpenBind(host: string, token: string | undefined): Promise<void> {
  if (token) return;
  const addresses = await lookup(host, { all: true }).catch(() => undefined);
  if (!addresses || addresses.every((entry) => isLoopback(entry.address))) return;
  throw new Error(
    `refusing to serve on ${host} without a token: anyone who can reach it could start jobs and change workflows; set --token (or SWITCHYARD_TOKEN), or bind a loopback address such as 127.0.0.1`,
  );
}
