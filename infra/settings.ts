import { Duration } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { DEFAULT_MAX_TREE_JOBS, parseDuration } from '../engine/index.js';
import { MAX_REPLY_SHARDS } from '../functions/transport/amqp/reply-shards.js';
import { PROFILES, type ProfileName, profileDefaults } from './profiles.js';

export type BusKind = 'sqs' | 'rabbitmq';
/**
 * How API Gateway checks the credentialed routes: the stack's API key, IAM (SigV4), a Cognito JWT,
 * (`token`) a Lambda authorizer taking the stack's root token or a scoped token alone, or (`jwt`,
 * HTTP API only) any OpenID Connect issuer's JWTs.
 */
export type AuthKind = 'apiKey' | 'iam' | 'cognito' | 'token' | 'jwt';
/**
 * Which API Gateway API fronts the API function: a REST API (API keys, usage plans, WAF) or an HTTP
 * API (a third of the price a request, none of those three).
 */
export type ApiKind = 'rest' | 'http';
export type BrokerDeploymentMode = 'SINGLE_INSTANCE' | 'CLUSTER_MULTI_AZ';
/** Where the workers of the deployed workflows run: elsewhere (processes you run), or as Lambda functions. */
export type WorkersKind = 'external' | 'lambda';

/** Where the workflow definitions deployed with the stack come from. */
export interface WorkflowsSource {
  file: string;
  /** Given with `-c workflows=FILE`: a missing file is an error. Otherwise a missing default means none. */
  explicit: boolean;
}

export interface BrokerSettings {
  deploymentMode: BrokerDeploymentMode;
  /** A `major.minor` Amazon MQ for RabbitMQ version (`3.13`, `4.2`). @default 3.13 */
  engineVersion: string;
  /** @default mq.t3.micro for a single instance, mq.m7g.large for a cluster */
  instanceType: string;
  /**
   * Reply queues, jobs sharded over them by id, each with its own event source mapping
   * (`-c mqReplyQueues=`): Lambda runs one invocation at a time per Amazon MQ mapping, so each queue is
   * one serial lane (BENCHMARKS.md, "The replies lane on Amazon MQ"). @default 1; 4 in the production profile
   */
  replyQueues: number;
}

export interface ApiSettings {
  /** `-c api=http`: an HTTP API instead of the REST API. @default rest */
  kind: ApiKind;
  /** @default apiKey on a REST API, token on an HTTP API (which has no API keys) */
  auth: AuthKind;
  /** Steady requests per second, for the stage and the usage plan. @default 50 */
  rateLimit: number;
  /** @default 100 */
  burstLimit: number;
  /** Requests a day per API key; 0: no quota (the default: job starts, long polls and the dashboard all count). */
  dailyQuota: number;
  /** With `-c auth=cognito`: the user pool whose JWTs (ID tokens) the API accepts. */
  cognitoUserPoolArn?: string;
  /**
   * With `-c api=http -c auth=cognito` (`-c cognitoClientIds=id1,id2`): the app clients whose tokens
   * the HTTP API's JWT authorizer accepts (their `aud`, or `client_id` for access tokens).
   */
  cognitoClientIds?: string[];
  /**
   * With `-c api=http -c auth=jwt`: the OpenID Connect issuer (`-c jwtIssuer=https://…`, its
   * `iss`, whose `/.well-known/openid-configuration` API Gateway reads) and the audiences accepted
   * (`-c jwtAudience=a,b`: a token's `aud` or `client_id`).
   */
  jwt?: { issuer: string; audience: string[] };
  /** Concurrent executions reserved for (and capping) the API function; 0: none reserved. @default 50 */
  reservedConcurrency: number;
  /** An AWS WAF web ACL on the stage: AWS managed rules and a per-address rate rule. @default false */
  waf: boolean;
  /** The WAF rate rule: requests per address in any 5 minutes before it blocks. @default 2000 */
  wafRateLimit: number;
  /** Create the region-wide API Gateway CloudWatch role that execution logging needs. @default true */
  createCloudWatchRole: boolean;
}

/** `-c archive=true`: finished jobs archived to S3 as DynamoDB's TTL deletes them (infra/constructs/job-archive.ts). */
export interface ArchiveSettings {
  enabled: boolean;
  /** Days each archive object is kept. @default 365 */
  days: number;
}

/** `-c backup=true`: an AWS Backup plan of the table (infra/constructs/table-backup.ts). */
export interface BackupSettings {
  enabled: boolean;
  /** Days each backup (and its copy) is kept. @default 35 */
  retentionDays: number;
  /** A backup vault in another region (or account) every backup is copied to. */
  copyVaultArn?: string;
}

/** `-c workers=lambda`: a Lambda function per step queue of the deployed workflows (SQS bus only). */
export interface WorkerSettings {
  kind: WorkersKind;
  /** The module exporting one `lambdaWorker` per step queue, named after the queue in camelCase. */
  entry: string;
  /** Each worker function's timeout: the longest step; at most the step queues' visibility timeout. @default 60 s */
  timeout: Duration;
  /** @default 512 */
  memorySize: number;
  /** Most concurrent invocations per worker function (its event source's `maxConcurrency`). @default 10 */
  maxConcurrency: number;
}

/** Everything the stack can be told with `-c key=value` (or cdk.json's `context`). */
export interface SwitchyardSettings {
  stackName: string;
  /** `-c profile=production`: the defaults of infra/profiles.ts under the settings given with `-c`. */
  profile?: ProfileName;
  bus: BusKind;
  /** Prefix of every SQS queue the stack and the handlers create. @default `<stackName>-` */
  queuePrefix: string;
  workflows: WorkflowsSource;
  /** `-c destroy=true`: the table and log groups are deleted with the stack (test stacks). */
  destroy: boolean;
  /** X-Ray active tracing on the functions and the API stage. @default false */
  tracing: boolean;
  /**
   * Take only replies that echo their request's token (`-c replyAuth=true`; protocol.md, "Reply
   * authentication"): for a broker that other teams' workers can publish on. @default false
   */
  replyAuth: boolean;
  /**
   * Webhooks (docs/notifications.md): the default target of workflows without `notify:`
   * (`-c notifyUrl= -c notifyEvents= -c notifySecret=`), the hosts deliveries may go to
   * (`-c notifyAllowHosts=a.example.com,b.example.com`), and whether plain http is refused
   * (`-c notifyHttpsOnly=false` for a receiver inside your network). @default https only, any host
   */
  notify: { url?: string; events?: string; secret?: string; allowHosts?: string; httpsOnly: boolean };
  /** Ship source maps with the functions and have Node use them in stack traces. @default false */
  sourceMaps: boolean;
  /**
   * `-c secretsPrefix=P`: a `params` secret NAME is the Secrets Manager secret `P` + NAME, which the
   * manager functions may read (and no other secret). Unset: no secrets deployed. @default none
   */
  secretsPrefix?: string;
  /** How long a worker may hold a request before SQS delivers it again. @default 5 minutes */
  stepVisibilityTimeout: Duration;
  logRetentionDays: number;
  /** Finished jobs older than this many days are deleted; 0 keeps them. @default 30 */
  jobRetentionDays: number;
  /** The largest worker reply taken and request sent, in bytes (`-c maxMessageBytes=`; SQS: 1 MiB at most). */
  maxMessageBytes: number;
  /** The most jobs one tree (a job, its fan-outs and calls, at any depth) may hold (`-c maxTreeJobs=`). */
  maxTreeJobs: number;
  api: ApiSettings;
  broker: BrokerSettings;
  /** Most concurrent invocations each SQS event source may start (Lambda's `maxConcurrency`). */
  eventSources: {
    repliesMaxConcurrency: number;
    timersMaxConcurrency: number;
    deadLettersMaxConcurrency: number;
  };
  /**
   * CodeDeploy canary deployments of the API and replies functions' `live` aliases, rolled back on
   * their errors and throttles (`-c canaryDeployments=true`; on in the production profile).
   */
  canaryDeployments: boolean;
  /** Every alarm notifies this SNS topic; with an address, it is subscribed by email. */
  alarms: { email?: string };
  backup: BackupSettings;
  /**
   * Job status changes and steps waiting for someone put on the account's default EventBridge bus
   * (`-c jobEvents=false` turns it off): the table's stream read by the job-events function
   * (infra/constructs/job-events.ts). @default true
   */
  jobEvents: boolean;
  archive: ArchiveSettings;
  workers: WorkerSettings;
}

const DEFAULT_WORKFLOWS = 'examples/word-counts/workflows.yaml';
/** The word-count example's workers as Lambda functions: the default `-c workerEntry`. */
export const DEFAULT_WORKER_ENTRY = 'examples/word-counts/lambda-workers.ts';
/** Lambda's longest invocation: no step of a Lambda worker can take longer. */
const LAMBDA_MAX_TIMEOUT_SECONDS = 15 * 60;
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];
const MAX_VISIBILITY_TIMEOUT_SECONDS = 12 * 60 * 60;

/** Reads and checks the context; a wrong value stops the synth with a message naming the key. */
export function readSettings(node: Node): SwitchyardSettings {
  const profile = new ContextReader(node).optionalOneOf('profile', Object.keys(PROFILES) as ProfileName[]);
  const context = new ContextReader(node, profileDefaults(profile));
  const stackName = context.text('stackName', 'Switchyard');
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new Error(
      `-c stackName=${stackName}: a stack name is letters, digits and hyphens, starting with a letter`,
    );
  }
  // "_" cannot occur in a stack name: the default prefix of one stack is never the start of another's
  // (Switchyard_ does not match Switchyard-Staging_…). The queues are tagged with the stack too.
  const queuePrefix = context.text('queuePrefix', `${stackName}_`);
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(queuePrefix)) {
    throw new Error(
      `-c queuePrefix=${queuePrefix}: SQS queue names allow letters, digits, "-" and "_"; keep the prefix to 40 characters`,
    );
  }
  const explicitWorkflows = context.optionalText('workflows');
  const apiKind = context.oneOf('api', ['rest', 'http'], 'rest');
  const deploymentMode = context.oneOf(
    'brokerDeploymentMode',
    ['SINGLE_INSTANCE', 'CLUSTER_MULTI_AZ'],
    'SINGLE_INSTANCE',
  );
  const broker: BrokerSettings = {
    deploymentMode,
    engineVersion: context.text('brokerEngineVersion', '3.13'),
    instanceType: context.text(
      'brokerInstanceType',
      deploymentMode === 'SINGLE_INSTANCE' ? 'mq.t3.micro' : 'mq.m7g.large',
    ),
    replyQueues: context.integer('mqReplyQueues', 1, 1, MAX_REPLY_SHARDS),
  };
  checkBroker(broker);
  const settings: SwitchyardSettings = {
    stackName,
    profile,
    bus: context.oneOf('bus', ['sqs', 'rabbitmq'], 'sqs'),
    queuePrefix,
    workflows: explicitWorkflows
      ? { file: explicitWorkflows, explicit: true }
      : { file: context.text('defaultWorkflows', DEFAULT_WORKFLOWS), explicit: false },
    destroy: context.flag('destroy', false),
    tracing: context.flag('tracing', false),
    replyAuth: context.flag('replyAuth', false),
    notify: readNotifySettings(context),
    canaryDeployments: context.flag('canaryDeployments', false),
    sourceMaps: context.flag('sourceMaps', false),
    secretsPrefix: secretsPrefix(context.optionalText('secretsPrefix')),
    stepVisibilityTimeout: Duration.seconds(
      context.durationSeconds('stepVisibilityTimeout', 300, 30, MAX_VISIBILITY_TIMEOUT_SECONDS),
    ),
    logRetentionDays: context.oneOf('logRetentionDays', LOG_RETENTION_DAYS, 30),
    jobRetentionDays: context.integer('jobRetentionDays', 30, 0, 3650),
    maxMessageBytes: context.integer('maxMessageBytes', 1024 * 1024, 1024, 1024 * 1024),
    maxTreeJobs: context.integer('maxTreeJobs', DEFAULT_MAX_TREE_JOBS, 1, 1_000_000_000),
    api: {
      kind: apiKind,
      auth: context.oneOf(
        'auth',
        ['apiKey', 'iam', 'cognito', 'token', 'jwt'],
        apiKind === 'http' ? 'token' : 'apiKey',
      ),
      rateLimit: context.integer('apiRateLimit', 50, 1, 10_000),
      burstLimit: context.integer('apiBurstLimit', 100, 1, 5_000),
      dailyQuota: context.integer('apiDailyQuota', 0, 0, 1_000_000_000),
      createCloudWatchRole: context.flag('apiGatewayCloudWatchRole', true),
      cognitoUserPoolArn: context.optionalText('cognitoUserPoolArn'),
      cognitoClientIds: cognitoClientIds(context.optionalText('cognitoClientIds')),
      jwt: jwtSettings(context.optionalText('jwtIssuer'), context.optionalText('jwtAudience')),
      reservedConcurrency: context.integer('apiReservedConcurrency', 50, 0, 10_000),
      waf: context.flag('waf', false),
      wafRateLimit: context.integer('wafRateLimit', 2000, 100, 2_000_000_000),
    },
    broker,
    eventSources: {
      // Lambda's maxConcurrency takes 2 to 1000.
      repliesMaxConcurrency: context.integer('repliesMaxConcurrency', 10, 2, 1000),
      timersMaxConcurrency: context.integer('timersMaxConcurrency', 5, 2, 1000),
      deadLettersMaxConcurrency: context.integer('deadLettersMaxConcurrency', 2, 2, 1000),
    },
    alarms: { email: alarmEmail(context.optionalText('alarmEmail')) },
    jobEvents: context.flag('jobEvents', true),
    archive: {
      enabled: context.flag('archive', false),
      days: context.integer('archiveDays', 365, 1, 36_500),
    },
    backup: {
      enabled: context.flag('backup', false),
      retentionDays: context.integer('backupRetentionDays', 35, 1, 36_500),
      copyVaultArn: backupVaultArn(context.optionalText('backupCopyVaultArn')),
    },
    workers: {
      kind: context.oneOf('workers', ['external', 'lambda'], 'external'),
      entry: context.text('workerEntry', DEFAULT_WORKER_ENTRY),
      timeout: Duration.seconds(context.durationSeconds('workerTimeout', 60, 1, LAMBDA_MAX_TIMEOUT_SECONDS)),
      memorySize: context.integer('workerMemory', 512, 128, 10_240),
      maxConcurrency: context.integer('workerMaxConcurrency', 10, 2, 1000),
    },
  };
  checkWorkers(settings);
  if (settings.api.kind === 'http') checkHttpApi(settings.api);
  else if (settings.api.auth === 'jwt') {
    throw new Error(
      "-c auth=jwt needs -c api=http: a REST API's JWT authorizer takes Cognito user pools only (-c auth=cognito)",
    );
  }
  if (settings.api.auth === 'cognito' && !settings.api.cognitoUserPoolArn) {
    throw new Error(
      '-c auth=cognito needs -c cognitoUserPoolArn=arn:aws:cognito-idp:<region>:<account>:userpool/<id>',
    );
  }
  if (
    settings.api.cognitoUserPoolArn &&
    !/^arn:aws[\w-]*:cognito-idp:[\w-]+:\d{12}:userpool\/[\w-]+$/.test(settings.api.cognitoUserPoolArn)
  ) {
    throw new Error(
      `-c cognitoUserPoolArn=${settings.api.cognitoUserPoolArn}: expected a Cognito user pool ARN`,
    );
  }
  return settings;
}

/**
 * What an HTTP API cannot do (docs/deploying.md, "REST or HTTP API"): API keys and usage plans, and an
 * AWS WAF web ACL, exist on REST APIs only; its JWT authorizer needs the app clients it accepts.
 */
function checkHttpApi(api: ApiSettings): void {
  if (api.auth === 'apiKey') {
    throw new Error(
      '-c api=http has no API keys (they exist on REST APIs only): choose -c auth=token (the default with api=http), iam, cognito or jwt',
    );
  }
  if (api.dailyQuota > 0) {
    throw new Error(
      `-c apiDailyQuota=${api.dailyQuota} needs a usage plan, which exists on REST APIs only: leave -c api=http out, or the quota`,
    );
  }
  if (api.waf) {
    throw new Error(
      '-c waf=true: AWS WAF attaches to REST APIs, not HTTP APIs: leave -c api=http out, or the web ACL',
    );
  }
  if (api.auth === 'jwt' && !api.jwt) {
    throw new Error(
      '-c auth=jwt needs -c jwtIssuer=https://<issuer> and -c jwtAudience=<audience>[,<audience>…]: the issuer whose tokens the API accepts, and for whom',
    );
  }
  if (api.auth === 'cognito' && !api.cognitoClientIds?.length) {
    throw new Error(
      "-c api=http -c auth=cognito needs -c cognitoClientIds=<app client id>[,<id>…]: an HTTP API's JWT authorizer accepts the tokens of the app clients it names",
    );
  }
}

/** Both or neither: an issuer without an audience would take any of its tokens. */
function jwtSettings(issuer: string | undefined, audience: string | undefined): ApiSettings['jwt'] {
  if (issuer === undefined && audience === undefined) return undefined;
  if (issuer === undefined || audience === undefined)
    throw new Error('-c jwtIssuer and -c jwtAudience go together (-c auth=jwt)');
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {}
  if (url?.protocol !== 'https:')
    throw new Error(`-c jwtIssuer=${issuer}: an OpenID Connect issuer is an https:// URL (a token's iss)`);
  const audiences = audience.split(',').map((entry) => entry.trim());
  if (audiences.some((entry) => !/^\S{1,256}$/.test(entry)))
    throw new Error(`-c jwtAudience=${audience}: a comma-separated list of audiences, none empty`);
  return { issuer, audience: audiences };
}

function cognitoClientIds(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const ids = value.split(',').map((id) => id.trim());
  const wrong = ids.find((id) => !/^[A-Za-z0-9]{1,128}$/.test(id));
  if (wrong !== undefined)
    throw new Error(
      `-c cognitoClientIds=${value}: "${wrong}" is not a Cognito app client id (letters and digits)`,
    );
  return ids;
}

/**
 * Lambda workers take their requests from Lambda's SQS event source. Amazon MQ's runs one invocation
 * at a time per queue and reports no partial batch, and its functions would sit in the broker's VPC:
 * on RabbitMQ, workers are processes (docs/deploying.md).
 */
function checkWorkers(settings: SwitchyardSettings): void {
  const { workers } = settings;
  if (workers.kind !== 'lambda') return;
  if (settings.bus !== 'sqs') {
    throw new Error(
      `-c workers=lambda needs -c bus=sqs, not ${settings.bus}: Lambda workers take their requests from SQS ` +
        "step queues. On RabbitMQ (Amazon MQ) run the workers as processes with the SDK's RabbitMQ transport (docs/deploying.md)",
    );
  }
  if (workers.timeout.toSeconds() > settings.stepVisibilityTimeout.toSeconds()) {
    throw new Error(
      `-c workerTimeout=${workers.timeout.toSeconds()}s is longer than -c stepVisibilityTimeout=` +
        `${settings.stepVisibilityTimeout.toSeconds()}s: SQS would deliver a request again while its worker still runs ` +
        '(and Lambda refuses such an event source); raise stepVisibilityTimeout or lower workerTimeout',
    );
  }
}

function backupVaultArn(value: string | undefined): string | undefined {
  if (
    value !== undefined &&
    !/^arn:aws[\w-]*:backup:[a-z0-9-]+:\d{12}:backup-vault:[A-Za-z0-9_.-]{2,50}$/.test(value)
  ) {
    throw new Error(
      `-c backupCopyVaultArn=${value}: expected a backup vault ARN, arn:aws:backup:<region>:<account>:backup-vault:<name>`,
    );
  }
  return value;
}

function alarmEmail(value: string | undefined): string | undefined {
  if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) {
    throw new Error(`-c alarmEmail=${value}: expected an email address`);
  }
  return value;
}

/** Amazon MQ runs RabbitMQ 4 only on mq.m7g hosts, and a cluster not on the burstable t3.micro. */
function checkBroker(broker: BrokerSettings): void {
  if (!/^\d+\.\d+$/.test(broker.engineVersion)) {
    throw new Error(`-c brokerEngineVersion=${broker.engineVersion}: give major.minor, e.g. 3.13 or 4.2`);
  }
  if (!broker.engineVersion.startsWith('3.') && !broker.instanceType.startsWith('mq.m7g.')) {
    throw new Error(
      `-c brokerEngineVersion=${broker.engineVersion}: Amazon MQ runs RabbitMQ 4 only on mq.m7g instances, not ${broker.instanceType}`,
    );
  }
  if (broker.deploymentMode === 'CLUSTER_MULTI_AZ' && broker.instanceType === 'mq.t3.micro') {
    throw new Error(
      '-c brokerDeploymentMode=CLUSTER_MULTI_AZ needs a larger host than mq.t3.micro (-c brokerInstanceType=...)',
    );
  }
}

/**
 * Context values arrive as strings from `-c` and as JSON values from cdk.json: accept both. A key the
 * context does not set takes the profile's value, if it has one.
 */
class ContextReader {
  constructor(
    private readonly node: Node,
    private readonly defaults: Record<string, unknown> = {},
  ) {}

  private raw(key: string): unknown {
    const value: unknown = this.node.tryGetContext(key);
    return value === undefined || value === null || value === '' ? this.defaults[key] : value;
  }

  optionalText(key: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new Error(`-c ${key}: expected text, got ${JSON.stringify(value)}`);
    return value;
  }

  text(key: string, fallback: string): string {
    return this.optionalText(key) ?? fallback;
  }

  flag(key: string, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined || value === null || value === '') return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new Error(`-c ${key}=${String(value)}: expected true or false`);
  }

  integer(key: string, fallback: number, min: number, max: number): number {
    const value = this.raw(key);
    if (value === undefined || value === null || value === '') return fallback;
    const number = typeof value === 'number' ? value : Number(value);
    if (!Number.isInteger(number) || number < min || number > max) {
      throw new Error(`-c ${key}=${String(value)}: expected a whole number from ${min} to ${max}`);
    }
    return number;
  }

  /** Seconds as a number, or a duration such as `5m` or `90s`. */
  durationSeconds(key: string, fallback: number, min: number, max: number): number {
    const value = this.raw(key);
    if (value === undefined || value === null || value === '') return fallback;
    const ms =
      typeof value === 'number'
        ? value * 1000
        : /^\d+$/.test(String(value))
          ? Number(value) * 1000
          : parseDuration(String(value));
    if (ms === undefined || ms % 1000 !== 0 || ms / 1000 < min || ms / 1000 > max) {
      throw new Error(
        `-c ${key}=${String(value)}: expected whole seconds from ${min} to ${max} (e.g. 300 or 5m)`,
      );
    }
    return ms / 1000;
  }

  oneOf<T extends string | number>(key: string, allowed: readonly T[], fallback: T): T {
    return this.optionalOneOf(key, allowed) ?? fallback;
  }

  optionalOneOf<T extends string | number>(key: string, allowed: readonly T[]): T | undefined {
    const value = this.raw(key);
    if (value === undefined || value === null || value === '') return undefined;
    const match = allowed.find((option) => String(option) === String(value));
    if (match === undefined) {
      throw new Error(`-c ${key}=${String(value)}: expected one of ${allowed.join(', ')}`);
    }
    return match;
  }
}

/** Secrets Manager names: letters, digits and `/_+=.@-`; the prefix ends the name's fixed part. */
function secretsPrefix(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9/_+=.@-]{1,200}$/.test(value))
    throw new Error(
      `-c secretsPrefix=${value}: a Secrets Manager name prefix is 1 to 200 letters, digits or /_+=.@- (e.g. switchyard/)`,
    );
  return value;
}

/** `-c notify…`: a URL needs its secret; the handlers check the rest as they start (functions/aws/environment.ts). */
function readNotifySettings(context: ContextReader): SwitchyardSettings['notify'] {
  const notify: SwitchyardSettings['notify'] = { httpsOnly: context.flag('notifyHttpsOnly', true) };
  const url = context.optionalText('notifyUrl');
  const secret = context.optionalText('notifySecret');
  const events = context.optionalText('notifyEvents');
  const allowHosts = context.optionalText('notifyAllowHosts');
  if (url !== undefined && secret === undefined)
    throw new Error('-c notifyUrl needs -c notifySecret: the name of the secret that signs each delivery');
  if (url !== undefined && notify.httpsOnly && !url.startsWith('https://'))
    throw new Error(
      `-c notifyUrl=${url}: deliveries go over https only (-c notifyHttpsOnly=false allows http)`,
    );
  if (url !== undefined) notify.url = url;
  if (secret !== undefined) notify.secret = secret;
  if (events !== undefined) notify.events = events;
  if (allowHosts !== undefined) notify.allowHosts = allowHosts;
  return notify;
}
