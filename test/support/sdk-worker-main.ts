/**
 * A worker built with the SDK's `runWorker`, run as its own process by test/support/sdk-worker-process.ts
 * so a test can signal or kill it. WORKER_QUEUE names the step queue; WORKER_MODE is `hold` (take the
 * request and never answer) or `echo` (answer with the input and this pid); WORKER_SHUTDOWN_TIMEOUT_MS
 * sets `shutdownTimeoutMs`; WORKER_SQS_ENDPOINT and WORKER_QUEUE_PREFIX put it on SQS instead of
 * RabbitMQ (AMQP_URL). It prints one JSON line per event on stdout: `{"event":"ready"}`,
 * `{"event":"received","correlationId","attempt"}`, and its log on stderr, one line per message.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { runWorker, type WorkerOptions } from '../../functions/worker/index.js';
import { SqsWorkerTransport } from '../../functions/worker/transports/sqs.js';

const queue = process.env.WORKER_QUEUE;
const mode = process.env.WORKER_MODE ?? 'echo';
if (!queue) throw new Error('WORKER_QUEUE is required');

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const log = (message: string) => process.stderr.write(`${message}\n`);

const options: WorkerOptions = {
  queue,
  amqpUrl: process.env.AMQP_URL,
  logger: { info: log, warn: log, error: log },
  handler: (input, context) => {
    say({ event: 'received', correlationId: context.correlationId, attempt: context.attempt });
    // Stuck as on a call that never answers: the timer keeps the process alive, as its socket would.
    if (mode === 'hold') return new Promise(() => setInterval(() => {}, 60_000));
    return { ...input, handledBy: process.pid };
  },
};
if (process.env.WORKER_SHUTDOWN_TIMEOUT_MS) {
  options.shutdownTimeoutMs = Number(process.env.WORKER_SHUTDOWN_TIMEOUT_MS);
}
const sqsEndpoint = process.env.WORKER_SQS_ENDPOINT;
if (sqsEndpoint) {
  const client = new SQSClient({
    endpoint: sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  options.transport = new SqsWorkerTransport({
    client,
    queuePrefix: process.env.WORKER_QUEUE_PREFIX ?? '',
    onError: (error) => log(error.message),
  });
}
await runWorker(options);
say({ event: 'ready' });
