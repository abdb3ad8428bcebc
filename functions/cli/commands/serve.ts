import { parseDuration } from '../../../engine/index.js';
import { loadDashboard } from '../../dashboard/load-dashboard.js';
import { startServe } from '../../local/serve.js';
import { createJsonLogger } from '../../telemetry/json-logger.js';
import { CliError } from '../client.js';

export interface ServeCommandOptions {
  config?: string[];
  db: string;
  amqp?: string;
  bus: string;
  port: string;
  host: string;
  retain?: string;
  token?: string;
  allowHost?: string[];
  allowOrigin?: string[];
  maxFanOut?: string;
  fanOutSlice?: string;
  maxBody?: string;
  maxReply?: string;
  maxFanOutBytes?: string;
  replyQueue?: string;
  synchronous: string;
  requestTtl?: string;
  quorumQueues?: boolean;
  maxDeliveries?: string;
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0)
    throw new CliError(`${flag} must be a whole number, got "${value}"`);
  return number;
}

/** A list flag's values, each of which may itself be a comma-separated list, else the variable's. */
function listOption(values: string[] | undefined, variable: string | undefined): string[] | undefined {
  const raw = values ?? (variable === undefined ? undefined : [variable]);
  return raw
    ?.flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

/** Runs the local manager until SIGTERM or SIGINT, then stops consuming, finishes what is in hand, and closes. */
export async function serve(options: ServeCommandOptions): Promise<void> {
  if (options.bus !== 'rabbitmq' && options.bus !== 'memory')
    throw new CliError(`--bus must be rabbitmq or memory, got "${options.bus}"`);
  const synchronous = options.synchronous.toUpperCase();
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL')
    throw new CliError(`--synchronous must be FULL or NORMAL, got "${options.synchronous}"`);
  const retainMs = options.retain === undefined ? undefined : parseDuration(options.retain);
  if (options.retain !== undefined && !retainMs)
    throw new CliError(`--retain must be a duration such as 7d or 12h, got "${options.retain}"`);
  const fanOutSlice = positiveInt(options.fanOutSlice, '--fan-out-slice');
  if (fanOutSlice === 0) throw new CliError('--fan-out-slice must be at least 1, got "0"');
  const requestTtlMs = options.requestTtl === undefined ? undefined : parseDuration(options.requestTtl);
  if (options.requestTtl !== undefined && !requestTtlMs)
    throw new CliError(`--request-ttl must be a duration such as 1h or 10m, got "${options.requestTtl}"`);
  const maxDeliveries = positiveInt(options.maxDeliveries, '--max-deliveries');
  if (maxDeliveries === 0) throw new CliError('--max-deliveries must be at least 1, got "0"');
  const logger = createJsonLogger({});
  let handle: Awaited<ReturnType<typeof startServe>>;
  try {
    handle = await startServe({
      configFiles: options.config ?? [],
      db: options.db,
      synchronous,
      amqpUrl: options.amqp,
      bus: options.bus,
      replyQueue: options.replyQueue,
      port: positiveInt(options.port, '--port'),
      host: options.host,
      retainMs,
      token: options.token ?? process.env.SWITCHYARD_TOKEN,
      allowHosts: listOption(options.allowHost, process.env.SWITCHYARD_ALLOW_HOST),
      allowOrigins: listOption(options.allowOrigin, process.env.SWITCHYARD_ALLOW_ORIGIN),
      maxFanOut: positiveInt(options.maxFanOut, '--max-fan-out'),
      fanOutSlice,
      maxBodyBytes: positiveInt(options.maxBody, '--max-body'),
      maxReplyBytes: positiveInt(options.maxReply, '--max-reply'),
      maxFanOutBytes: positiveInt(options.maxFanOutBytes, '--max-fan-out-bytes'),
      requestTtlMs,
      quorumQueues: options.quorumQueues,
      maxDeliveries,
      dashboard: await loadDashboard(),
      logger,
    });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const fatal = await new Promise<Error | undefined>((resolve) => {
    const stop = (reason: Record<string, unknown>, error?: Error) => {
      logger.info('stopping', reason);
      handle.close().then(
        () => resolve(error),
        (closeError) => {
          logger.error('stopping failed', { error: closeError });
          resolve(error);
        },
      );
    };
    process.once('SIGTERM', () => stop({ signal: 'SIGTERM' }));
    process.once('SIGINT', () => stop({ signal: 'SIGINT' }));
    void handle.failed.then((error) => stop({ reason: error.message }, error));
  });
  if (fatal) throw new CliError(fatal.message);
}
