import { describe, expect, it } from 'vitest';
import { EnvironmentError, readHandlerEnvironment } from '../../../functions/aws/environment.js';

const SQS_ENV = {
  TABLE_NAME: 'Switchyard-StoreTable',
  BUS: 'sqs',
  QUEUE_PREFIX: 'Switchyard-',
  REPLY_QUEUE: 'workflow-manager',
  REPLY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-workflow-manager',
  TIMER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-switchyard-timers',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-switchyard-steps-dlq',
  REPLY_DEAD_LETTER_QUEUE_URL:
    'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-workflow-manager-dlq',
  STEP_QUEUE_DLQ_ARN: 'arn:aws:sqs:us-east-1:123456789012:Switchyard-switchyard-steps-dlq',
  STEP_QUEUE_VISIBILITY_TIMEOUT: '300',
  LOG_LEVEL: 'INFO',
  MAX_BODY_BYTES: '262144',
  MAX_FAN_OUT: '100000',
};

const MQ_ENV = {
  TABLE_NAME: 'Switchyard-StoreTable',
  BUS: 'rabbitmq',
  QUEUE_PREFIX: 'Switchyard-',
  REPLY_QUEUE: 'workflow-manager',
  TIMER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/Switchyard-switchyard-timers',
  MQ_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:broker-AbCdEf',
  MQ_AMQPS_ENDPOINT: 'amqps://b-1234.mq.us-east-1.amazonaws.com:5671',
};

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    readHandlerEnvironment(env);
  } catch (error) {
    if (error instanceof EnvironmentError) return error.problems;
    throw error;
  }
  return [];
}

describe('Function: readHandlerEnvironment', () => {
  it('reads the SQS stack environment', () => {
    // Act
    const env = readHandlerEnvironment(SQS_ENV);

    // Assess
    expect(env).toEqual({
      tableName: 'Switchyard-StoreTable',
      replyQueue: 'workflow-manager',
      timerQueueUrl: SQS_ENV.TIMER_QUEUE_URL,
      logLevel: 'info',
      maxBodyBytes: 262144,
      maxFanOut: 100000,
      maxMessageBytes: 1048576,
      maxFanOutBytes: 268435456,
      fanOutSlice: 10000,
      maxTreeJobs: 1_000_000,
      retentionDays: 0,
      apiAuthorizer: false,
      replyAuth: false,
      notify: { httpsOnly: true },
      bus: {
        kind: 'sqs',
        queuePrefix: 'Switchyard-',
        replyQueueUrl: SQS_ENV.REPLY_QUEUE_URL,
        deadLetterQueueUrl: SQS_ENV.DEAD_LETTER_QUEUE_URL,
        replyDeadLetterQueueUrl: SQS_ENV.REPLY_DEAD_LETTER_QUEUE_URL,
        stepQueueDeadLetterArn: SQS_ENV.STEP_QUEUE_DLQ_ARN,
        stepQueueVisibilityTimeoutSeconds: 300,
        queueTags: {},
      },
    });
  });

  it('reads API_AUTHORIZER (-c auth=token), and refuses a value other than true or false', () => {
    // Act
    const behindAuthorizer = readHandlerEnvironment({ ...SQS_ENV, API_AUTHORIZER: 'true' });
    const wrong = () => readHandlerEnvironment({ ...SQS_ENV, API_AUTHORIZER: 'yes' });

    // Assess
    expect(behindAuthorizer.apiAuthorizer).toBe(true);
    expect(wrong).toThrow(/API_AUTHORIZER must be true or false, got "yes"/);
  });

  it('reads REPLY_AUTH (-c replyAuth=true), and refuses a value other than true or false', () => {
    expect(readHandlerEnvironment({ ...SQS_ENV, REPLY_AUTH: 'true' }).replyAuth).toBe(true);
    expect(() => readHandlerEnvironment({ ...SQS_ENV, REPLY_AUTH: 'on' })).toThrow(
      /REPLY_AUTH must be true or false, got "on"/,
    );
  });

  it('reads the webhook settings (docs/notifications.md): a default target needs its secret', () => {
    expect(
      readHandlerEnvironment({
        ...SQS_ENV,
        NOTIFY_URL: 'https://hooks.example.com/in',
        NOTIFY_SECRET: 'HOOK_KEY',
        NOTIFY_EVENTS: 'job.failed, job.aborted',
        NOTIFY_ALLOW_HOSTS: 'hooks.example.com,*.internal.example.com',
        NOTIFY_HTTPS_ONLY: 'false',
      }).notify,
    ).toEqual({
      default: {
        url: 'https://hooks.example.com/in',
        secret: 'HOOK_KEY',
        events: ['job.failed', 'job.aborted'],
      },
      allowHosts: ['hooks.example.com', '*.internal.example.com'],
      httpsOnly: false,
    });
    expect(
      readHandlerEnvironment({ ...SQS_ENV, NOTIFY_URL: 'https://x.example.com/', NOTIFY_SECRET: 'K' }).notify
        .default?.events,
    ).toEqual(['job.completed', 'job.failed', 'job.cancelled', 'job.aborted']);
    expect(() => readHandlerEnvironment({ ...SQS_ENV, NOTIFY_URL: 'https://x.example.com/' })).toThrow(
      /NOTIFY_URL needs NOTIFY_SECRET/,
    );
    expect(() => readHandlerEnvironment({ ...SQS_ENV, NOTIFY_HTTPS_ONLY: 'no' })).toThrow(
      /NOTIFY_HTTPS_ONLY must be true or false, got "no"/,
    );
  });

  it('reads where workflow schedules live; the group without its role is a problem', () => {
    const schedules = {
      SCHEDULE_GROUP: 'Switchyard-workflows',
      SCHEDULE_ROLE_ARN: 'arn:aws:iam::123456789012:role/Switchyard-SchedulesInvokeRole',
    };
    expect(readHandlerEnvironment({ ...SQS_ENV, ...schedules }).schedules).toEqual({
      group: 'Switchyard-workflows',
      roleArn: schedules.SCHEDULE_ROLE_ARN,
    });
    const target = 'arn:aws:lambda:us-east-1:123456789012:function:Switchyard-Timers';
    expect(
      readHandlerEnvironment({ ...SQS_ENV, ...schedules, SCHEDULE_TARGET_ARN: target }).schedules?.targetArn,
    ).toBe(target);
    expect(problemsOf({ ...SQS_ENV, SCHEDULE_GROUP: 'Switchyard-workflows' })).toEqual([
      'SCHEDULE_ROLE_ARN is not set',
    ]);
  });

  it('reads the RabbitMQ stack environment, with defaults for what it leaves out', () => {
    // Act
    const env = readHandlerEnvironment(MQ_ENV);

    // Assess
    expect(env.bus).toEqual({
      kind: 'rabbitmq',
      secretArn: MQ_ENV.MQ_SECRET_ARN,
      amqpsEndpoint: MQ_ENV.MQ_AMQPS_ENDPOINT,
      replyShards: 1,
    });
    expect([env.logLevel, env.maxBodyBytes, env.maxFanOut]).toEqual(['info', 256 * 1024, 100_000]);
  });

  it('reads the reply queues of Amazon MQ (REPLY_QUEUES, -c mqReplyQueues), from 1 to 16', () => {
    const env = readHandlerEnvironment({ ...MQ_ENV, REPLY_QUEUES: '4' });
    expect(env.bus.kind === 'rabbitmq' && env.bus.replyShards).toBe(4);
    expect(problemsOf({ ...MQ_ENV, REPLY_QUEUES: '17' })).toEqual([
      'REPLY_QUEUES is "17"; expected a whole number from 1 to 16',
    ]);
  });

  it('reads the tree quota (MAX_TREE_JOBS, -c maxTreeJobs), and refuses one that is not a whole number from 1', () => {
    expect(readHandlerEnvironment({ ...SQS_ENV, MAX_TREE_JOBS: '5000' }).maxTreeJobs).toBe(5_000);
    expect(problemsOf({ ...SQS_ENV, MAX_TREE_JOBS: '0' })).toEqual([
      'MAX_TREE_JOBS is "0"; expected a whole number from 1 to 1000000000',
    ]);
  });

  it('lists every problem at once, each naming its variable', () => {
    // Prepare
    const env = {
      BUS: 'sqs',
      TIMER_QUEUE_URL: 'not a url',
      LOG_LEVEL: 'LOUD',
      MAX_FAN_OUT: '-1',
      STEP_QUEUE_VISIBILITY_TIMEOUT: '5m',
    };

    // Act
    const problems = problemsOf(env);

    // Assess
    expect(problems).toEqual([
      'TABLE_NAME is not set',
      'TIMER_QUEUE_URL is not a URL',
      'LOG_LEVEL is "LOUD"; expected DEBUG, INFO, WARN or ERROR',
      'MAX_FAN_OUT is "-1"; expected a whole number from 1 to 10000000',
      'QUEUE_PREFIX is not set',
      'REPLY_QUEUE_URL is not set',
      'STEP_QUEUE_DLQ_ARN is not set',
      'STEP_QUEUE_VISIBILITY_TIMEOUT is "5m"; expected a whole number from 0 to 43200',
    ]);
  });

  it('names the bus variables a RabbitMQ stack needs, and an unknown bus', () => {
    expect(problemsOf({ ...MQ_ENV, MQ_SECRET_ARN: '', MQ_AMQPS_ENDPOINT: 'https://b-1.mq' })).toEqual([
      'MQ_SECRET_ARN is not set',
      'MQ_AMQPS_ENDPOINT must be a amqps:// or amqp:// URL',
    ]);
    expect(problemsOf({ ...SQS_ENV, BUS: 'kafka' })).toEqual([
      'BUS is "kafka"; expected one of sqs, rabbitmq',
    ]);
  });

  it('says where the contract is written down', () => {
    expect(() => readHandlerEnvironment({})).toThrow(
      /infra\/handler-environment\.ts[\s\S]*- TABLE_NAME is not set/,
    );
  });
});
