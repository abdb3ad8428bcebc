import { startServe } from '../functions/local/serve.js';
import { createJsonLogger } from '../functions/telemetry/json-logger.js';
import { startHeapSampler } from './heap-sampler.js';

/*
 * `switchyard serve` with the SQLite synchronous level chosen, for the benchmark's FULL vs NORMAL
 * comparison while the command line has no flag for it (startServe's `synchronous` option). Same
 * wiring as the CLI (functions/cli/commands/serve.ts) minus the dashboard.
 *
 * Environment: BENCH_CONFIG, BENCH_DB, BENCH_REPLY_QUEUE, BENCH_PORT, BENCH_MAX_FAN_OUT, BENCH_MAX_REPLY_BYTES,
 * BENCH_SYNCHRONOUS (FULL or NORMAL), BENCH_HEAP_PROFILE_DIR and BENCH_HEAP_MODE (sample the heap: heap-sampler.ts).
 */

const env = process.env;
if (env.BENCH_HEAP_PROFILE_DIR)
  startHeapSampler(
    env.BENCH_HEAP_PROFILE_DIR,
    env.BENCH_HEAP_MODE === 'allocations' ? 'allocations' : 'live',
  );
const synchronous = env.BENCH_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL';
const logger = createJsonLogger({});
const handle = await startServe({
  configFiles: [env.BENCH_CONFIG ?? ''],
  db: env.BENCH_DB,
  replyQueue: env.BENCH_REPLY_QUEUE,
  port: Number(env.BENCH_PORT ?? 0),
  maxFanOut: Number(env.BENCH_MAX_FAN_OUT ?? 100_000),
  ...(env.BENCH_MAX_REPLY_BYTES ? { maxReplyBytes: Number(env.BENCH_MAX_REPLY_BYTES) } : {}),
  synchronous,
  logger,
});
const stop = () => {
  handle.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
