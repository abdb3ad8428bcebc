import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import type { Logger } from '../telemetry/telemetry.js';

/**
 * Descriptors serve may open besides those open when it reports, and besides its connections: a
 * broker connection per vhost, SQLite's temporary files, name lookups.
 */
export const OWN_MARGIN = 64;

export interface DescriptorReading {
  /** The most descriptors this process may open (its soft RLIMIT_NOFILE); undefined when unknown. */
  limit?: number;
  /** Descriptors open now; undefined when unknown. */
  open?: number;
}

/** Reads the process's descriptor limit and how many it has open (Linux and macOS; else unknown). */
export async function readDescriptors(): Promise<DescriptorReading> {
  const [limit, open] = await Promise.all([descriptorLimit(), openDescriptors()]);
  return { limit, open };
}

/**
 * Logs the limit, and warns when `connections` (the most serve's listeners hold) plus what serve
 * itself keeps open could pass it: past the limit, accepting a connection fails (EMFILE), and so
 * does opening anything else, a database file or a broker connection.
 */
export function reportDescriptors(reading: DescriptorReading, connections: number, logger: Logger): void {
  const own = (reading.open ?? 0) + OWN_MARGIN;
  const limit =
    reading.limit === undefined ? 'unknown' : Number.isFinite(reading.limit) ? reading.limit : 'unlimited';
  logger.info('file descriptors', { limit, open: reading.open, connections });
  if (reading.limit !== undefined && connections + own > reading.limit) {
    logger.warn(
      `serve may need ${connections + own} file descriptors (${connections} connections and about ${own} of its own) but may open ${reading.limit}: raise the limit (ulimit -n) or lower --max-connections`,
      { limit: reading.limit, connections, own },
    );
  }
}

async function descriptorLimit(): Promise<number | undefined> {
  // Linux: "Max open files  <soft>  <hard>  files". Node raised the soft limit to the hard one at start.
  const limits = await readFile('/proc/self/limits', 'utf8').catch(() => undefined);
  const soft = limits?.match(/^Max open files\s+(\S+)/m)?.[1];
  if (soft !== undefined) return limitOf(soft);
  // Elsewhere a shell's: a child process inherits this one's limits.
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', 'ulimit -n'], { timeout: 2_000 }, (error, stdout) =>
      resolve(error ? undefined : limitOf(stdout.trim())),
    );
  });
}

function limitOf(text: string): number | undefined {
  if (text === 'unlimited') return Number.POSITIVE_INFINITY;
  const limit = Number(text);
  return Number.isInteger(limit) && limit > 0 ? limit : undefined;
}

/** /dev/fd lists the reading process's descriptors (the one reading it among them). */
async function openDescriptors(): Promise<number | undefined> {
  const entries = await readdir('/dev/fd').catch(() => undefined);
  return entries ? Math.max(0, entries.length - 1) : undefined;
}
