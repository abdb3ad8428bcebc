import { namespaceProblem, parseDuration, queuePrefixProblem } from '../../../engine/index.js';
import { loadDashboard } from '../../dashboard/load-dashboard.js';
import { amqpUrlFromEnv, LOCAL_BUSES, type LocalBusKind } from '../../local/local-buses.js';
import { startServe } from '../../local/serve.js';
import { createJsonLogger } from '../../telemetry/json-logger.js';
import { createPrettyLogger } from '../../telemetry/pretty-logger.js';
import { redactUrl } from '../../transport/amqp/url.js';
import { CliError } from '../client.js';
import { colourFor, paint } from '../terminal.js';
import { DEFAULT_ARCHIVE_DIR } from './archive.js';

export interface ServeCommandOptions {
  config?: string[];
  db: string;
  amqp?: string;
  bus: string;
  port: string;
  host: string;
  healthPort?: string;
  maxConnections?: string;
  headersTimeout?: string;
  requestTimeout?: string;
  keepAliveTimeout?: string;
  retain?: string;
  archiveDir?: string;
  archive?: boolean;
  secretsFile?: string;
  secretsEnvPrefix?: string;
  notifyUrl?: string;
  notifyEvents?: string;
  notifySecret?: string;
  notifyAllowHost?: string[];
  token?: string;
  namespace?: string;
  queuePrefix?: string;
  allowHost?: string[];
  allowOrigin?: string[];
  maxFanOut?: string;
  fanOutSlice?: string;
  maxBody?: string;
  maxReply?: string;
  maxFanOutBytes?: string;
  maxTreeJobs?: string;
  replyQueue?: string;
  synchronous: string;
  requestTtl?: string;
  quorumQueues?: boolean;
  replyAuth?: boolean;
  maxDeliveries?: string;
  /** `pretty` (the default on a terminal) or `json` (the default otherwise). */
  logFormat?: string;
}

/** The log format: readable lines on a terminal, JSON lines otherwise, unless `--log-format` says. */
export function logFormatOf(
  value: string | undefined,
  tty = process.stdout.isTTY === true,
): 'pretty' | 'json' {
  if (value === undefined) return tty ? 'pretty' : 'json';
  const format = value.toLowerCase();
  if (format !== 'pretty' && format !== 'json')
    throw new CliError(`--log-format must be pretty or json, got "${value}"`);
  return format;
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0)
    throw new CliError(`${flag} must be a whole number, got "${value}"`);
  return number;
}

/** A duration flag (`500ms`, `10s`, `1m`) in milliseconds; 0 is refused: it would mean no bound. */
function durationOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (!ms) throw new CliError(`${flag} must be a duration such as 10s or 500ms, got "${value}"`);
  return ms;
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
  if (!Object.hasOwn(LOCAL_BUSES, options.bus))
    throw new CliError(`--bus must be ${Object.keys(LOCAL_BUSES).join(' or ')}, got "${options.bus}"`);
  const synchronous = options.synchronous.toUpperCase();
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL')
    throw new CliError(`--synchronous must be FULL or NORMAL, got "${options.synchronous}"`);
  const retainMs = options.retain === undefined ? undefined : parseDuration(options.retain);
  if (options.retain !== undefined && !retainMs)
    throw new CliError(`--retain must be a duration such as 7d or 12h, got "${options.retain}"`);
  const fanOutSlice = positiveInt(options.fanOutSlice, '--fan-out-slice');
  if (fanOutSlice === 0) throw new CliError('--fan-out-slice must be at least 1, got "0"');
  const maxTreeJobs = positiveInt(options.maxTreeJobs, '--max-tree-jobs');
  if (maxTreeJobs === 0) throw new CliError('--max-tree-jobs must be at least 1, got "0"');
  const requestTtlMs = options.requestTtl === undefined ? undefined : parseDuration(options.requestTtl);
  if (options.requestTtl !== undefined && !requestTtlMs)
    throw new CliError(`--request-ttl must be a duration such as 1h or 10m, got "${options.requestTtl}"`);
  const maxDeliveries = positiveInt(options.maxDeliveries, '--max-deliveries');
  if (maxDeliveries === 0) throw new CliError('--max-deliveries must be at least 1, got "0"');
  const namespaceProblemText =
    options.namespace === undefined ? undefined : namespaceProblem(options.namespace);
  if (namespaceProblemText) throw new CliError(`--namespace: ${namespaceProblemText}`);
  const prefixProblem =
    options.queuePrefix === undefined ? undefined : queuePrefixProblem(options.queuePrefix);
  if (prefixProblem) throw new CliError(`--queue-prefix: ${prefixProblem}`);
  const maxConnections = positiveInt(options.maxConnections, '--max-connections');
  if (maxConnections === 0) throw new CliError('--max-connections must be at least 1, got "0"');
  const http = {
    maxConnections,
    headersTimeoutMs: durationOption(options.headersTimeout, '--headers-timeout'),
    requestTimeoutMs: durationOption(options.requestTimeout, '--request-timeout'),
    keepAliveTimeoutMs: durationOption(options.keepAliveTimeout, '--keep-alive-timeout'),
  };
  const pretty = logFormatOf(options.logFormat) === 'pretty';
  const colour = colourFor(process.stdout);
  // For people, one start-up line (below) says what the JSON "serving" entry says.
  const logger = pretty
    ? createPrettyLogger({ colour, skip: (message) => message === 'serving' })
    : createJsonLogger({});
  // Taken from before start-up: a SIGTERM that comes between the "serving" line and the end of
  // start-up (a supervisor stopping a serve it just saw start) stops it then, never kills it mid-way.
  let stopNow: ((reason: Record<string, unknown>) => void) | undefined;
  let stopAsked: Record<string, unknown> | undefined;
  const askStop = (reason: Record<string, unknown>) => {
    if (stopNow) stopNow(reason);
    else stopAsked ??= reason;
  };
  process.once('SIGTERM', () => askStop({ signal: 'SIGTERM' }));
  process.once('SIGINT', () => askStop({ signal: 'SIGINT' }));
  let handle: Awaited<ReturnType<typeof startServe>>;
  try {
    handle = await startServe({
      configFiles: options.config ?? [],
      namespace: options.namespace,
      queuePrefix: options.queuePrefix,
      db: options.db,
      synchronous,
      amqpUrl: options.amqp,
      bus: options.bus as LocalBusKind,
      replyQueue: options.replyQueue,
      port: positiveInt(options.port, '--port'),
      host: options.host,
      healthPort: positiveInt(options.healthPort, '--health-port'),
      http,
      retainMs,
      archiveDir: options.archive === false ? undefined : (options.archiveDir ?? DEFAULT_ARCHIVE_DIR),
      secretsFile: options.secretsFile,
      secretsEnvPrefix: options.secretsEnvPrefix,
      notify: notifyOption(options),
      notifyAllowHosts: options.notifyAllowHost,
      token: options.token ?? process.env.SWITCHYARD_TOKEN,
      allowHosts: listOption(options.allowHost, process.env.SWITCHYARD_ALLOW_HOST),
      allowOrigins: listOption(options.allowOrigin, process.env.SWITCHYARD_ALLOW_ORIGIN),
      maxFanOut: positiveInt(options.maxFanOut, '--max-fan-out'),
      fanOutSlice,
      maxBodyBytes: positiveInt(options.maxBody, '--max-body'),
      maxReplyBytes: positiveInt(options.maxReply, '--max-reply'),
      maxFanOutBytes: positiveInt(options.maxFanOutBytes, '--max-fan-out-bytes'),
      maxTreeJobs,
      requestTtlMs,
      quorumQueues: options.quorumQueues,
      replyAuth: options.replyAuth,
      maxDeliveries,
      dashboard: await loadDashboard(),
      logger,
    });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (pretty) {
    const p = paint(colour);
    const workflows = (await handle.store.listWorkflows()).map((workflow) => workflow.name);
    process.stdout.write(
      `${p.green('switchyard serving')} ${p.bold(`${handle.url}/`)} (dashboard and API) · SQLite ${options.db} · ${
        options.bus === 'memory' ? 'in-memory bus' : `RabbitMQ ${redactUrl(amqpUrlFromEnv(options.amqp))}`
      }${handle.healthUrl ? ` · health ${handle.healthUrl}/healthz` : ''} · ${workflows.length ? `workflows: ${workflows.join(', ')}` : 'no workflows yet (serve --config FILE, or switchyard push FILE)'} · Ctrl-C stops it\n`,
    );
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
    stopNow = stop;
    if (stopAsked) stop(stopAsked);
    void handle.failed.then((error) => stop({ reason: error.message }, error));
  });
  if (fatal) throw new CliError(fatal.message);
}

/** The events `--notify-url` posts when `--notify-events` names none: the ends of a job. */
export const DEFAULT_NOTIFY_EVENTS = ['job.completed', 'job.failed', 'job.cancelled', 'job.aborted'];

/** `--notify-url`, `--notify-events`, `--notify-secret` together, or a refusal naming what is missing. */
function notifyOption(
  options: ServeCommandOptions,
): { url: string; events: string[]; secret: string } | undefined {
  if (options.notifyUrl === undefined) {
    if (options.notifyEvents !== undefined || options.notifySecret !== undefined)
      throw new CliError('--notify-events and --notify-secret go with --notify-url');
    return undefined;
  }
  if (options.notifySecret === undefined)
    throw new CliError('--notify-url needs --notify-secret: the name of the secret that signs each delivery');
  const events = options.notifyEvents
    ? options.notifyEvents
        .split(',')
        .map((event) => event.trim())
        .filter(Boolean)
    : DEFAULT_NOTIFY_EVENTS;
  return { url: options.notifyUrl, events, secret: options.notifySecret };
}
