import { METRICS_NAMESPACE, SERVICE_NAME } from './constructs/monitoring.js';
import type { RabbitMqBus } from './constructs/rabbitmq-bus.js';
import type { SqsBus } from './constructs/sqs-bus.js';
import type { SwitchyardTable } from './constructs/table.js';
import type { TimerQueue } from './constructs/timers.js';
import { DEPLOYED_FAN_OUT_SLICE } from './function-sizes.js';
import { REPLY_QUEUE, STACK_TAG } from './queue-names.js';
import type { SwitchyardSettings } from './settings.js';

export { DEPLOYED_FAN_OUT_SLICE };

export interface HandlerEnvironmentSources {
  settings: SwitchyardSettings;
  store: SwitchyardTable;
  timerQueue: TimerQueue;
  sqsBus?: SqsBus;
  mqBus?: RabbitMqBus;
}

/** The environment every handler reads its configuration from (the same for all of them). */
export function handlerEnvironment(sources: HandlerEnvironmentSources): Record<string, string> {
  const { settings, store, timerQueue, sqsBus, mqBus } = sources;
  const environment: Record<string, string> = {
    TABLE_NAME: store.table.tableName,
    BUS: settings.bus,
    QUEUE_PREFIX: settings.queuePrefix,
    REPLY_QUEUE,
    TIMER_QUEUE_URL: timerQueue.queue.queueUrl,
    LOG_LEVEL: 'INFO',
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    MAX_BODY_BYTES: String(256 * 1024),
    MAX_FAN_OUT: String(100_000),
    // A transition creates at most this many children, fewer near the invocation's deadline.
    FAN_OUT_SLICE: String(DEPLOYED_FAN_OUT_SLICE),
    RETENTION_DAYS: String(settings.jobRetentionDays),
    MAX_MESSAGE_BYTES: String(settings.maxMessageBytes),
    MAX_TREE_JOBS: String(settings.maxTreeJobs),
  };
  // -c auth=token: the API trusts the principal its Lambda authorizer found.
  if (settings.api.auth === 'token') environment.API_AUTHORIZER = 'true';
  // -c replyAuth=true: replies without their request's token are ignored.
  if (settings.replyAuth) environment.REPLY_AUTH = 'true';
  // -c secretsPrefix: `params` secrets are read from Secrets Manager under this prefix.
  if (settings.secretsPrefix !== undefined) environment.SECRETSMANAGER_PREFIX = settings.secretsPrefix;
  // Webhooks (docs/notifications.md): the default target, and where deliveries may go.
  const { notify } = settings;
  if (notify.url) environment.NOTIFY_URL = notify.url;
  if (notify.events) environment.NOTIFY_EVENTS = notify.events;
  if (notify.secret) environment.NOTIFY_SECRET = notify.secret;
  if (notify.allowHosts) environment.NOTIFY_ALLOW_HOSTS = notify.allowHosts;
  if (!notify.httpsOnly) environment.NOTIFY_HTTPS_ONLY = 'false';
  if (sqsBus) {
    Object.assign(environment, {
      REPLY_QUEUE_URL: sqsBus.replyQueue.queueUrl,
      DEAD_LETTER_QUEUE_URL: sqsBus.stepDeadLetterQueue.queueUrl,
      REPLY_DEAD_LETTER_QUEUE_URL: sqsBus.replyDeadLetterQueue.queueUrl,
      STEP_QUEUE_DLQ_ARN: sqsBus.stepDeadLetterQueue.queueArn,
      STEP_QUEUE_VISIBILITY_TIMEOUT: String(settings.stepVisibilityTimeout.toSeconds()),
      QUEUE_TAGS: JSON.stringify({ [STACK_TAG]: settings.stackName }),
    });
  }
  if (mqBus) {
    Object.assign(environment, {
      MQ_SECRET_ARN: mqBus.credentials.secretArn,
      MQ_AMQPS_ENDPOINT: mqBus.amqpsEndpoint,
      REPLY_QUEUES: String(settings.broker.replyQueues),
    });
  }
  return environment;
}
