/**
 * A worker built with the SDK, run as its own process by test/support/sdk-worker-process.ts so a test
 * can kill it with SIGKILL while it holds a request. WORKER_QUEUE names the step queue; WORKER_MODE is
 * `hold` (take the request and never answer) or `echo` (answer with the input and this pid). It prints
 * one JSON line per event on stdout: `{"event":"ready"}`, `{"event":"received","correlationId","attempt"}`.
 */
import { createWorker } from '../../functions/worker/index.js';

const queue = process.env.WORKER_QUEUE;
const mode = process.env.WORKER_MODE ?? 'echo';
if (!queue) throw new Error('WORKER_QUEUE is required');

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const quiet = { info() {}, warn() {}, error: (message: string) => process.stderr.write(`${message}\n`) };

const worker = createWorker({
  queue,
  amqpUrl: process.env.AMQP_URL,
  logger: quiet,
  handler: (input, context) => {
    say({ event: 'received', correlationId: context.correlationId, attempt: context.attempt });
    if (mode === 'hold') return new Promise(() => {});
    return { ...input, handledBy: process.pid };
  },
});
await worker.start();
say({ event: 'ready' });
