import { App } from 'aws-cdk-lib';
import { describe, expect, test } from 'vitest';
import { readSettings } from '../../infra/settings.js';

const settingsOf = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

describe('readSettings', () => {
  test('defaults: SQS bus, API keys, prefix from the stack name, 5 minute step visibility', () => {
    const settings = settingsOf({});
    expect(settings).toMatchObject({
      stackName: 'Switchyard',
      bus: 'sqs',
      queuePrefix: 'Switchyard_',
      workflows: { file: 'examples/word-counts/workflows.yaml', explicit: false },
      destroy: false,
      tracing: false,
      logRetentionDays: 30,
      api: {
        auth: 'apiKey',
        rateLimit: 50,
        burstLimit: 100,
        dailyQuota: 0,
        reservedConcurrency: 50,
        waf: false,
        createCloudWatchRole: true,
      },
      broker: { deploymentMode: 'SINGLE_INSTANCE', engineVersion: '3.13', instanceType: 'mq.t3.micro' },
    });
    expect(settings.stepVisibilityTimeout.toSeconds()).toBe(300);
    expect(settings.eventSources).toEqual({
      repliesMaxConcurrency: 10,
      timersMaxConcurrency: 5,
      deadLettersMaxConcurrency: 2,
    });
    expect(settings.alarms).toEqual({ email: undefined });
  });

  test('-c values arrive as strings; cdk.json values as JSON', () => {
    const settings = settingsOf({
      stackName: 'Test1',
      destroy: 'true',
      tracing: true,
      stepVisibilityTimeout: '90s',
      apiRateLimit: '5',
      workflows: 'my.yaml',
      logRetentionDays: '7',
    });
    expect(settings).toMatchObject({
      stackName: 'Test1',
      queuePrefix: 'Test1_',
      destroy: true,
      tracing: true,
      workflows: { file: 'my.yaml', explicit: true },
      logRetentionDays: 7,
    });
    expect(settings.stepVisibilityTimeout.toSeconds()).toBe(90);
    expect(settings.api.rateLimit).toBe(5);
    expect(settingsOf({ stepVisibilityTimeout: 600 }).stepVisibilityTimeout.toSeconds()).toBe(600);
  });

  test('a cluster broker defaults to a host that supports it; RabbitMQ 4 needs an m7g host', () => {
    expect(settingsOf({ brokerDeploymentMode: 'CLUSTER_MULTI_AZ' }).broker.instanceType).toBe('mq.m7g.large');
    expect(() => settingsOf({ brokerEngineVersion: '4.2' })).toThrow(/RabbitMQ 4 only on mq.m7g/);
    expect(
      settingsOf({ brokerEngineVersion: '4.2', brokerInstanceType: 'mq.m7g.medium' }).broker.engineVersion,
    ).toBe('4.2');
    expect(() =>
      settingsOf({ brokerDeploymentMode: 'CLUSTER_MULTI_AZ', brokerInstanceType: 'mq.t3.micro' }),
    ).toThrow(/larger host/);
  });

  test('-c profile=production: a cluster broker on m7g, retained data, more concurrency', () => {
    const settings = settingsOf({ profile: 'production' });
    expect(settings).toMatchObject({
      profile: 'production',
      destroy: false,
      logRetentionDays: 90,
      broker: { deploymentMode: 'CLUSTER_MULTI_AZ', instanceType: 'mq.m7g.large' },
      api: { reservedConcurrency: 100, auth: 'token' },
      eventSources: { repliesMaxConcurrency: 20, timersMaxConcurrency: 5, deadLettersMaxConcurrency: 2 },
    });
    expect(settingsOf({}).profile).toBeUndefined();
    expect(settingsOf({}).api.auth).toBe('apiKey');
  });

  test('settings given explicitly override the profile', () => {
    const settings = settingsOf({
      profile: 'production',
      brokerDeploymentMode: 'SINGLE_INSTANCE',
      brokerInstanceType: 'mq.m7g.medium',
      repliesMaxConcurrency: '40',
      destroy: true,
    });
    expect(settings.broker).toMatchObject({
      deploymentMode: 'SINGLE_INSTANCE',
      instanceType: 'mq.m7g.medium',
    });
    expect(settings.eventSources.repliesMaxConcurrency).toBe(40);
    expect(settings.destroy).toBe(true);
    expect(settings.api.reservedConcurrency).toBe(100);
  });

  test('wrong values name the key and what it takes', () => {
    expect(() => settingsOf({ profile: 'prod' })).toThrow('-c profile=prod: expected one of production');
    expect(() => settingsOf({ destroy: 'yes' })).toThrow('-c destroy=yes: expected true or false');
    expect(() => settingsOf({ stepVisibilityTimeout: '10s' })).toThrow(
      /stepVisibilityTimeout=10s: expected whole seconds from 30/,
    );
    expect(() => settingsOf({ logRetentionDays: 2 })).toThrow(/logRetentionDays=2: expected one of 1, 3, 5/);
    expect(() => settingsOf({ queuePrefix: 'bad.prefix' })).toThrow(/queuePrefix=bad.prefix/);
    expect(() => settingsOf({ stackName: '1abc' })).toThrow(/stackName=1abc/);
    expect(() => settingsOf({ brokerEngineVersion: '3' })).toThrow(/major.minor/);
    expect(() => settingsOf({ apiReservedConcurrency: -1 })).toThrow(/apiReservedConcurrency=-1/);
    expect(() => settingsOf({ auth: 'cognito', cognitoUserPoolArn: 'pool' })).toThrow(
      /cognitoUserPoolArn=pool/,
    );
    expect(() => settingsOf({ auth: 'bearer' })).toThrow(
      /auth=bearer: expected one of apiKey, iam, cognito, token/,
    );
    expect(settingsOf({ auth: 'token' }).api.auth).toBe('token');
    expect(() => settingsOf({ wafRateLimit: 10 })).toThrow(
      /wafRateLimit=10: expected a whole number from 100/,
    );
  });

  test('workers: external by default; -c workers=lambda with its entry, timeout, memory and concurrency', () => {
    expect(settingsOf({}).workers).toMatchObject({
      kind: 'external',
      entry: 'examples/word-counts/lambda-workers.ts',
      memorySize: 512,
      maxConcurrency: 10,
    });
    expect(settingsOf({}).workers.timeout.toSeconds()).toBe(60);
    const lambda = settingsOf({
      workers: 'lambda',
      workerEntry: 'my-workers.ts',
      workerTimeout: '15m',
      stepVisibilityTimeout: '20m',
      workerMemory: 2048,
      workerMaxConcurrency: '100',
    }).workers;
    expect(lambda).toMatchObject({
      kind: 'lambda',
      entry: 'my-workers.ts',
      memorySize: 2048,
      maxConcurrency: 100,
    });
    expect(lambda.timeout.toSeconds()).toBe(900);
  });

  test('-c workers=lambda refuses the RabbitMQ bus, a timeout over the visibility timeout or over 15 minutes', () => {
    expect(() => settingsOf({ workers: 'lambda', bus: 'rabbitmq' })).toThrow(
      /-c workers=lambda needs -c bus=sqs, not rabbitmq/,
    );
    expect(() => settingsOf({ workers: 'lambda', workerTimeout: '6m' })).toThrow(
      /-c workerTimeout=360s is longer than -c stepVisibilityTimeout=300s/,
    );
    expect(() =>
      settingsOf({ workers: 'lambda', workerTimeout: '20m', stepVisibilityTimeout: '30m' }),
    ).toThrow(/-c workerTimeout=20m: expected whole seconds from 1 to 900/);
    expect(() => settingsOf({ workers: 'process' })).toThrow(
      /-c workers=process: expected one of external, lambda/,
    );
    expect(() => settingsOf({ workers: 'lambda', workerMaxConcurrency: 1 })).toThrow(
      /-c workerMaxConcurrency=1: expected a whole number from 2 to 1000/,
    );
    // Without workers=lambda the worker settings are not held against the bus.
    expect(settingsOf({ bus: 'rabbitmq', workerTimeout: '10m' }).workers.kind).toBe('external');
  });
});

describe('readSettings: webhooks (docs/notifications.md)', () => {
  test('https only and any host by default; a URL needs its secret, and https', () => {
    expect(settingsOf({}).notify).toEqual({ httpsOnly: true });
    expect(
      settingsOf({
        notifyUrl: 'https://hooks.example.com/in',
        notifySecret: 'HOOK_KEY',
        notifyEvents: 'job.failed',
        notifyAllowHosts: 'hooks.example.com',
      }).notify,
    ).toEqual({
      url: 'https://hooks.example.com/in',
      secret: 'HOOK_KEY',
      events: 'job.failed',
      allowHosts: 'hooks.example.com',
      httpsOnly: true,
    });
    expect(() => settingsOf({ notifyUrl: 'https://hooks.example.com/in' })).toThrow(
      '-c notifyUrl needs -c notifySecret',
    );
    expect(() => settingsOf({ notifyUrl: 'http://hooks.example.com/in', notifySecret: 'K' })).toThrow(
      'deliveries go over https only',
    );
    expect(
      settingsOf({ notifyUrl: 'http://10.0.0.5/in', notifySecret: 'K', notifyHttpsOnly: 'false' }).notify
        .httpsOnly,
    ).toBe(false);
  });
});
