import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { amqpUrlFromEnv } from '../functions/local/local-buses.js';
import { type ServeHandle, startServe } from '../functions/local/serve.js';
import { createJsonLogger } from '../functions/telemetry/json-logger.js';
import { brokerAnswers } from './broker-answers.js';

export interface DemoServe {
  serve: ServeHandle;
  amqpUrl: string;
  onRabbit: boolean;
  /** The demo's own folder: its database and its workers' files. */
  work: string;
  /** Put before each of the example's step queues: the demo's workers consume these. */
  queuePrefix: string;
}

/**
 * `switchyard serve` for a demo, on RabbitMQ when a broker answers at AMQP_URL, else on the
 * in-memory bus. It replies on a queue of its own (`switchyard-<name>`) and prefixes its step
 * queues (`<name>.`), so that the manager of the README's walkthrough, which consumes
 * `workflow-manager` exclusively, and its workers on the example's queues, leave the demo alone and
 * it them.
 */
export async function startDemoServe(name: string, configFile: string): Promise<DemoServe> {
  const amqpUrl = amqpUrlFromEnv();
  const onRabbit = await brokerAnswers(amqpUrl);
  if (!onRabbit) {
    console.log(`No RabbitMQ answers at ${new URL(amqpUrl).host}: running on the in-memory bus instead.`);
    console.log(
      '(Start a broker with "rabbitmq-server -detached" to run the example the way it runs for real.)\n',
    );
  }
  const work = await mkdtemp(join(tmpdir(), `switchyard-${name}-`));
  const queuePrefix = `${name}.`;
  const serve = await startServe({
    configFiles: [configFile],
    db: join(work, 'switchyard.db'),
    bus: onRabbit ? 'rabbitmq' : 'memory',
    amqpUrl,
    replyQueue: `switchyard-${name}`,
    queuePrefix,
    port: 0,
    logger: createJsonLogger({ level: 'error' }),
  });
  return { serve, amqpUrl, onRabbit, work, queuePrefix };
}

/** Why serve stopped, once it did: the demo's own calls then fail too, which says nothing more. */
let serveFailure: Error | undefined;

/**
 * Ends the demo when serve cannot go on (its reply queue taken by another manager, the broker's
 * login refused): one line, then the workers and serve are stopped (for at most 5 s) and the process
 * exits 1, instead of a demo that waits for replies that never come.
 */
export function endOnServeFailure(serve: ServeHandle, stopWorkers: () => Promise<unknown>): void {
  void serve.failed.then(async (error) => {
    serveFailure = error;
    console.error(`demo failed: switchyard serve stopped: ${error.message}`);
    const stopped = Promise.all([stopWorkers(), serve.close()]).catch(() => {});
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    process.exit(1);
  });
}

/** A demo's failure in one line and exit code 1; nothing more once serve's failure was told. */
export function demoFailed(error: unknown): void {
  process.exitCode = 1;
  if (serveFailure === undefined) console.error(`demo failed: ${(error as Error).message}`);
}
