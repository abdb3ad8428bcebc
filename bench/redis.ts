import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchChild, freePort, spawnChild } from './child.js';

/**
 * How Redis keeps what BullMQ writes: `none` (no snapshot, no AOF: memory only), `everysec` (AOF,
 * fsync once a second: up to a second of acknowledged writes lost in a crash), `always` (AOF, fsync
 * before each write is answered: as durable as serve's SQLite FULL).
 */
export type RedisPersistence = 'none' | 'everysec' | 'always';

export interface BenchRedis extends BenchChild {
  port: number;
  persistence: RedisPersistence;
}

/**
 * Debian's `redis-server` on a free port with a throwaway config in a fresh directory, whatever
 * runs on 6379, so the benchmark neither touches nor is disturbed by another Redis.
 */
export async function startBenchRedis(persistence: RedisPersistence): Promise<BenchRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-redis-'));
  const durability =
    persistence === 'none' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', persistence];
  const child = await spawnChild({
    name: 'redis-server',
    command: 'redis-server',
    args: [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--daemonize',
      'no',
      '--dir',
      dir,
      ...durability,
    ],
    readyLine: 'Ready to accept connections',
    readyTimeoutMs: 30_000,
  });
  return {
    ...child,
    port,
    persistence,
    stop: async () => {
      await child.stop(5_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
