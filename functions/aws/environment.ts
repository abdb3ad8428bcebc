import { DEFAULT_MAX_TREE_JOBS, DEFAULT_REPLY_QUEUE } from '../../engine/index.js';
import type { LogLevel } from '../telemetry/telemetry.js';
import { MAX_REPLY_SHARDS } from '../transport/amqp/reply-shards.js';

export type BusKind = 'sqs' | 'rabbitmq';

/** The SQS bus's settings, from the environment the stack gives every handler (infra/handler-environment.ts). */
export interface SqsBusEnvironment {
  kind: 'sqs';
  /** Step queue `q` is the SQS queue `<queuePrefix>q`. */
  queuePrefix: string;
  replyQueueUrl: string;
  /** The step queues' shared dead-letter queue, read by the dead-letters function. */
  deadLetterQueueUrl?: string;
  /** The reply queue's dead-letter queue: where poisoned replies are kept (functions/manager/reply-policy.ts). */
  replyDeadLetterQueueUrl?: string;
  /** Step queues created after the deploy redrive to this queue, as the stack's own do. */
  stepQueueDeadLetterArn: string;
  stepQueueVisibilityTimeoutSeconds: number;
  /** Tags every step queue created at run time carries (QUEUE_TAGS, JSON): IAM lets the functions use only those. */
  queueTags: Record<string, string>;
}

export interface RabbitMqBusEnvironment {
  kind: 'rabbitmq';
  /** The Secrets Manager secret holding `{"username", "password"}` of the broker user. */
  secretArn: string;
  /** `amqps://b-….mq.<region>.amazonaws.com:5671` */
  amqpsEndpoint: string;
  /** Reply queues, jobs sharded over them by id, one event source mapping each (REPLY_QUEUES). */
  replyShards: number;
}

export interface HandlerEnvironment {
  tableName: string;
  /** The reply queue's name: `reply_to` on RabbitMQ, the name under the prefix on SQS. */
  replyQueue: string;
  timerQueueUrl: string;
  bus: SqsBusEnvironment | RabbitMqBusEnvironment;
  logLevel: LogLevel;
  maxBodyBytes: number;
  maxFanOut: number;
  /** The largest reply taken and request sent (MAX_MESSAGE_BYTES; SQS takes at most 1 MiB). */
  maxMessageBytes: number;
  /** The most input one fan-out may give its children (MAX_FAN_OUT_BYTES). */
  maxFanOutBytes: number;
  /** Children a fan-out creates per transition (FAN_OUT_SLICE): the memory a transition holds. */
  fanOutSlice: number;
  /** The most jobs one tree may hold under its root (MAX_TREE_JOBS; engine/job/tree-quota.ts). */
  maxTreeJobs: number;
  /** Finished jobs older than this many days are deleted (0: kept for good). */
  retentionDays: number;
  /** `-c auth=token` (API_AUTHORIZER=true): the API trusts its Lambda authorizer's context. */
  apiAuthorizer: boolean;
  /** Take only replies that echo their request's token (REPLY_AUTH). */
  replyAuth: boolean;
  /** Workflow schedules on EventBridge Scheduler (SCHEDULE_GROUP, SCHEDULE_ROLE_ARN, SCHEDULE_TARGET_ARN). */
  schedules?: ScheduleEnvironment;
  /**
   * `params` secrets are read from Secrets Manager, the secret `<prefix><name>` (SECRETSMANAGER_PREFIX,
   * `-c secretsPrefix`); unset, a request naming a secret fails its attempt.
   */
  secretsPrefix?: string;
  /** Webhooks (docs/notifications.md): the stack's default target and where deliveries may go. */
  notify: NotifyEnvironment;
}

export interface NotifyEnvironment {
  /** NOTIFY_URL, NOTIFY_EVENTS (comma-separated), NOTIFY_SECRET: for workflows without `notify:`. */
  default?: { url: string; events: string[]; secret: string };
  /** NOTIFY_ALLOW_HOSTS (comma-separated): the hosts deliveries may go to; absent: any. */
  allowHosts?: string[];
  /** NOTIFY_HTTPS_ONLY (default true): refuse plain http targets. */
  httpsOnly: boolean;
}

const DEFAULT_NOTIFY_EVENTS = ['job.completed', 'job.failed', 'job.cancelled', 'job.aborted'];
const commaList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export interface ScheduleEnvironment {
  /** The stack's schedule group. */
  group: string;
  /** The role EventBridge Scheduler invokes the timers function with. */
  roleArn: string;
  /** The timers function: set for the functions that register workflows (they create schedules). */
  targetArn?: string;
}

const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
const DEFAULT_MAX_FAN_OUT = 100_000;
const DEFAULT_FAN_OUT_SLICE = 10_000;
const DEFAULT_STEP_VISIBILITY_TIMEOUT_SECONDS = 300;
const MAX_VISIBILITY_TIMEOUT_SECONDS = 12 * 60 * 60;
const LOG_LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  WARNING: 'warn',
  ERROR: 'error',
};

/** Thrown when the environment is incomplete or wrong; its message lists every problem. */
export class EnvironmentError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `the handler's environment is not usable (see infra/handler-environment.ts):\n` +
        problems.map((problem) => `- ${problem}`).join('\n'),
    );
    this.name = 'EnvironmentError';
  }
}

/**
 * Reads the environment contract of infra/handler-environment.ts, checking every variable before
 * failing, so that one deploy shows every mistake at once. Secrets are never in it: the broker
 * password is read from Secrets Manager by its ARN.
 */
export function readHandlerEnvironment(env: NodeJS.ProcessEnv = process.env): HandlerEnvironment {
  const reader = new EnvironmentReader(env);
  const tableName = reader.required('TABLE_NAME');
  const busKind = reader.oneOf('BUS', ['sqs', 'rabbitmq'] as const);
  const timerQueueUrl = reader.url('TIMER_QUEUE_URL', ['http:', 'https:']);
  const replyQueue = reader.optional('REPLY_QUEUE') ?? DEFAULT_REPLY_QUEUE;
  const logLevel = reader.logLevel('LOG_LEVEL');
  const maxBodyBytes = reader.integer('MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1, 10 * 1024 * 1024);
  const maxFanOut = reader.integer('MAX_FAN_OUT', DEFAULT_MAX_FAN_OUT, 1, 10_000_000);
  const fanOutSlice = reader.integer('FAN_OUT_SLICE', DEFAULT_FAN_OUT_SLICE, 1, 1_000_000);
  const maxMessageBytes = reader.integer('MAX_MESSAGE_BYTES', 1024 * 1024, 1024, 1024 * 1024);
  const maxFanOutBytes = reader.integer('MAX_FAN_OUT_BYTES', 256 * 1024 * 1024, 1024, 2 ** 40);
  const maxTreeJobs = reader.integer('MAX_TREE_JOBS', DEFAULT_MAX_TREE_JOBS, 1, 1_000_000_000);
  const retentionDays = reader.integer('RETENTION_DAYS', 0, 0, 3650);
  const apiAuthorizerValue = reader.optional('API_AUTHORIZER') ?? 'false';
  if (apiAuthorizerValue !== 'true' && apiAuthorizerValue !== 'false')
    reader.problems.push(`API_AUTHORIZER must be true or false, got "${apiAuthorizerValue}"`);
  const apiAuthorizer = apiAuthorizerValue === 'true';
  const replyAuthValue = reader.optional('REPLY_AUTH') ?? 'false';
  if (replyAuthValue !== 'true' && replyAuthValue !== 'false')
    reader.problems.push(`REPLY_AUTH must be true or false, got "${replyAuthValue}"`);
  const replyAuth = replyAuthValue === 'true';
  const secretsPrefix = reader.optional('SECRETSMANAGER_PREFIX');
  const scheduleGroup = reader.optional('SCHEDULE_GROUP');
  const schedules: ScheduleEnvironment | undefined = scheduleGroup
    ? {
        group: scheduleGroup,
        roleArn: reader.required('SCHEDULE_ROLE_ARN'),
        targetArn: reader.optional('SCHEDULE_TARGET_ARN'),
      }
    : undefined;

  const notifyUrl = reader.optional('NOTIFY_URL');
  const notifySecret = reader.optional('NOTIFY_SECRET');
  if (notifyUrl !== undefined && notifySecret === undefined)
    reader.problems.push('NOTIFY_URL needs NOTIFY_SECRET: the name of the secret that signs each delivery');
  const httpsOnlyValue = reader.optional('NOTIFY_HTTPS_ONLY') ?? 'true';
  if (httpsOnlyValue !== 'true' && httpsOnlyValue !== 'false')
    reader.problems.push(`NOTIFY_HTTPS_ONLY must be true or false, got "${httpsOnlyValue}"`);
  const allowHosts = reader.optional('NOTIFY_ALLOW_HOSTS');
  const notify: NotifyEnvironment = { httpsOnly: httpsOnlyValue !== 'false' };
  if (allowHosts !== undefined) notify.allowHosts = commaList(allowHosts);
  if (notifyUrl !== undefined && notifySecret !== undefined) {
    const events = reader.optional('NOTIFY_EVENTS');
    notify.default = {
      url: notifyUrl,
      events: events === undefined ? DEFAULT_NOTIFY_EVENTS : commaList(events),
      secret: notifySecret,
    };
  }

  let bus: HandlerEnvironment['bus'] | undefined;
  if (busKind === 'sqs') {
    bus = {
      kind: 'sqs',
      queuePrefix: reader.required('QUEUE_PREFIX'),
      replyQueueUrl: reader.url('REPLY_QUEUE_URL', ['http:', 'https:']),
      deadLetterQueueUrl: reader.optional('DEAD_LETTER_QUEUE_URL'),
      replyDeadLetterQueueUrl: reader.optional('REPLY_DEAD_LETTER_QUEUE_URL'),
      stepQueueDeadLetterArn: reader.required('STEP_QUEUE_DLQ_ARN'),
      stepQueueVisibilityTimeoutSeconds: reader.integer(
        'STEP_QUEUE_VISIBILITY_TIMEOUT',
        DEFAULT_STEP_VISIBILITY_TIMEOUT_SECONDS,
        0,
        MAX_VISIBILITY_TIMEOUT_SECONDS,
      ),
      queueTags: reader.tags('QUEUE_TAGS'),
    };
  } else if (busKind === 'rabbitmq') {
    bus = {
      kind: 'rabbitmq',
      secretArn: reader.required('MQ_SECRET_ARN'),
      amqpsEndpoint: reader.url('MQ_AMQPS_ENDPOINT', ['amqps:', 'amqp:']),
      replyShards: reader.integer('REPLY_QUEUES', 1, 1, MAX_REPLY_SHARDS),
    };
  }
  if (reader.problems.length > 0 || !bus) throw new EnvironmentError(reader.problems);
  return {
    tableName,
    replyQueue,
    timerQueueUrl,
    bus,
    logLevel,
    maxBodyBytes,
    maxFanOut,
    maxMessageBytes,
    maxFanOutBytes,
    fanOutSlice,
    maxTreeJobs,
    retentionDays,
    apiAuthorizer,
    replyAuth,
    ...(schedules ? { schedules } : {}),
    ...(secretsPrefix ? { secretsPrefix } : {}),
    notify,
  };
}

/** Collects problems instead of throwing at the first one. */
class EnvironmentReader {
  readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  optional(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  required(name: string): string {
    const value = this.optional(name);
    if (value === undefined) this.problems.push(`${name} is not set`);
    return value ?? '';
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.required(name);
    if (value === '') return undefined;
    const match = allowed.find((option) => option === value);
    if (!match) this.problems.push(`${name} is "${value}"; expected one of ${allowed.join(', ')}`);
    return match;
  }

  url(name: string, protocols: readonly string[]): string {
    const value = this.required(name);
    if (value === '') return value;
    let protocol: string;
    try {
      protocol = new URL(value).protocol;
    } catch {
      // The value itself may be the broker endpoint with credentials in it: never echo it.
      this.problems.push(`${name} is not a URL`);
      return value;
    }
    if (!protocols.includes(protocol)) {
      this.problems.push(`${name} must be a ${protocols.map((p) => `${p}//`).join(' or ')} URL`);
    }
    return value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.optional(name);
    if (value === undefined) return fallback;
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      this.problems.push(`${name} is "${value}"; expected a whole number from ${min} to ${max}`);
      return fallback;
    }
    return number;
  }

  /** A JSON object of text values; unset: no tags. */
  tags(name: string): Record<string, string> {
    const value = this.optional(name);
    if (value === undefined) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
    const entries =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.entries(parsed) : undefined;
    if (!entries || entries.some(([, text]) => typeof text !== 'string')) {
      this.problems.push(`${name} is not a JSON object of text values`);
      return {};
    }
    return Object.fromEntries(entries) as Record<string, string>;
  }

  logLevel(name: string): LogLevel {
    const value = this.optional(name);
    if (value === undefined) return 'info';
    const level = LOG_LEVELS[value.toUpperCase()];
    if (!level) this.problems.push(`${name} is "${value}"; expected DEBUG, INFO, WARN or ERROR`);
    return level ?? 'info';
  }
}
