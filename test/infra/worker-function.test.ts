import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, test } from 'vitest';
import { SECURE_QUEUE } from '../../infra/constructs/sqs-bus.js';
import { WorkerFunction, type WorkerFunctionProps } from '../../infra/constructs/worker-function.js';
import { checkWorkerExports, workerExportName } from '../../infra/lambda-workers.js';
import { type SynthesizedStack, synthStack } from './synth-stack.js';
import { identityStatements, renderValue, resourcesOfType } from './template-queries.js';

const CDK = { timeout: 60_000 };
const ENTRY = 'examples/word-counts/lambda-workers.ts';
const BOOK = 'examples/word-counts/Alice_in_Wonderland.txt';
const WORD_COUNT_QUEUES = ['book-split', 'segment-word-counts', 'store-title', 'sum-splits'];

/** Findings cdk-nag reports (errors and warnings) and nobody acknowledged, as readable lines. */
function nagFindings(app: App): string[] {
  const report = new AwsSolutionsChecks().validateScope(app);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath}`),
  );
}

/** Each statement of the role policies whose logical id starts with `holder`, as `actions on resource`. */
function grantsOf(template: Template, holder: string): string[] {
  return identityStatements(template)
    .filter((statement) => statement.holder.startsWith(holder))
    .flatMap((statement) =>
      [statement.Resource]
        .flat()
        .map((resource) => `${[statement.Action].flat().sort().join(',')} on ${renderValue(resource)}`),
    )
    .sort();
}

/** A stack with a step queue and a reply queue as the SQS bus makes them, and a WorkerFunction on them. */
function aWorkerStack(
  options: { key?: boolean; visibility?: Duration } & Partial<WorkerFunctionProps> = {},
): { app: App; stack: Stack; worker: WorkerFunction; template: Template } {
  const app = new App();
  const stack = new Stack(app, 'Workers');
  const key = options.key ? new kms.Key(stack, 'QueueKey', { enableKeyRotation: true }) : undefined;
  const encryption = key
    ? { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: key, enforceSSL: true }
    : SECURE_QUEUE;
  const deadLetters = new sqs.Queue(stack, 'DeadLetters', encryption);
  const stepQueue = new sqs.Queue(stack, 'StepQueue', {
    ...encryption,
    visibilityTimeout: options.visibility ?? Duration.minutes(5),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
  });
  const replyQueue = new sqs.Queue(stack, 'ReplyQueue', {
    ...encryption,
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: 10 },
  });
  const worker = new WorkerFunction(stack, 'CountWords', {
    stepQueue,
    replyQueue,
    entry: ENTRY,
    handler: 'storeTitle',
    files: [BOOK],
    ...options,
  });
  return { app, stack, worker, template: Template.fromStack(stack) };
}

describe('WorkerFunction', CDK, () => {
  let built: ReturnType<typeof aWorkerStack>;
  beforeAll(() => {
    built = aWorkerStack();
  });

  test("is the entry's export on Node.js 24 (arm64), triggered by its step queue with partial batch responses", () => {
    const { template, stack } = built;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.storeTitle',
      Timeout: 60,
      MemorySize: 512,
    });
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StepQueue'), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    expect(stack.resolve(built.worker.function.functionName)).toBeDefined();
  });

  test('may only receive from its step queue, send to the reply queue and write its own log group', () => {
    expect(grantsOf(built.template, 'CountWordsRole')).toEqual([
      expect.stringMatching(/^logs:CreateLogStream,logs:PutLogEvents on <CountWordsLogs[A-Z0-9]+\.Arn>$/),
      expect.stringMatching(
        /^sqs:ChangeMessageVisibility,sqs:DeleteMessage,sqs:GetQueueAttributes,sqs:GetQueueUrl,sqs:ReceiveMessage on <StepQueue[A-Z0-9]+\.Arn>$/,
      ),
      expect.stringMatching(/^sqs:SendMessage on <ReplyQueue[A-Z0-9]+\.Arn>$/),
    ]);
  });

  test('is cdk-nag clean', () => {
    expect(nagFindings(built.app)).toEqual([]);
  });

  test("ships the files its worker reads beside the bundle (the example's book)", () => {
    const assembly = built.app.synth();
    const [fn] = Object.values(resourcesOfType(built.template, 'AWS::Lambda::Function'));
    const code = fn?.Properties?.Code as { S3Key: string } | undefined;
    const assetHash = String(code?.S3Key).replace(/\.zip$/, '');
    const bundle = join(assembly.directory, `asset.${assetHash}`);
    expect(existsSync(join(bundle, 'index.mjs'))).toBe(true);
    expect(existsSync(join(bundle, 'Alice_in_Wonderland.txt'))).toBe(true);
  });

  test('with queues encrypted by a KMS key, may also decrypt from the step queue and encrypt for the reply queue', () => {
    const { template, app } = aWorkerStack({ key: true });
    const grants = grantsOf(template, 'CountWordsRole');
    expect(grants).toContainEqual(expect.stringMatching(/^kms:Decrypt on <QueueKey[A-Z0-9]+\.Arn>$/));
    expect(grants).toContainEqual(
      expect.stringMatching(/^kms:Decrypt,kms:GenerateDataKey on <QueueKey[A-Z0-9]+\.Arn>$/),
    );
    expect(grants.filter((grant) => grant.startsWith('kms:'))).toHaveLength(2);
    expect(nagFindings(app)).toEqual([]);
  });

  test("refuses a timeout longer than its queue's visibility timeout, at synth", () => {
    expect(() => aWorkerStack({ visibility: Duration.seconds(30), timeout: Duration.minutes(2) })).toThrow(
      /has a timeout of 120 s, longer than its queue's visibility timeout \(30 s\)/,
    );
  });
});

describe('The word-count example with -c workers=lambda', CDK, () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthStack({
      workers: 'lambda',
      workflows: 'examples/word-counts/workflows.yaml',
      workerTimeout: '4m',
      workerMemory: '1024',
      workerMaxConcurrency: '50',
    });
  });

  test("runs each step queue's worker as a function of its own, on that queue, sized by -c workerTimeout, workerMemory and workerMaxConcurrency", () => {
    const { template } = synthesized;
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'));
    for (const queue of WORD_COUNT_QUEUES) {
      const [id, fn] = Object.entries(functions).find(
        ([, candidate]) => candidate.Properties?.Handler === `index.${workerExportName(queue)}`,
      ) ?? [undefined, undefined];
      expect(fn?.Properties, queue).toMatchObject({ Runtime: 'nodejs24.x', Timeout: 240, MemorySize: 1024 });
      // Its step queue invokes its live alias (a published version), as every trigger of the stack does.
      const [aliasId] =
        Object.entries(resourcesOfType(template, 'AWS::Lambda::Alias')).find(
          ([, alias]) => renderValue(alias.Properties?.FunctionName) === `<${id}>`,
        ) ?? [];
      const mapping = mappings.find((candidate) =>
        JSON.stringify(candidate.Properties?.FunctionName).includes(`{"Ref":"${aliasId}"}`),
      );
      expect(mapping?.Properties, queue).toMatchObject({
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 50 },
      });
      const queueId = renderValue(mapping?.Properties?.EventSourceArn).replace(/^<(.+)\.Arn>$/, '$1');
      expect(resourcesOfType(template, 'AWS::SQS::Queue')[queueId]?.Properties?.QueueName, queue).toBe(
        `Switchyard_${queue}`,
      );
    }
  });

  test("keeps the stack cdk-nag clean, with no wildcard in the workers' permissions", () => {
    expect(nagFindings(synthesized.app)).toEqual([]);
    const workerStatements = identityStatements(synthesized.template).filter((statement) =>
      statement.holder.startsWith('Worker'),
    );
    expect(workerStatements.length).toBeGreaterThan(0);
    for (const statement of workerStatements) {
      expect(JSON.stringify(statement.Action)).not.toContain('*');
      expect([statement.Resource].flat().map(renderValue).join()).not.toContain('*');
    }
  });

  test('gives every worker function error, throttle and near-timeout alarms', () => {
    const alarms = Object.values(resourcesOfType(synthesized.template, 'AWS::CloudWatch::Alarm'));
    const watched = alarms.flatMap((alarm) =>
      ((alarm.Properties?.Dimensions ?? []) as { Name: string; Value: unknown }[])
        .filter((dimension) => dimension.Name === 'FunctionName')
        .map((dimension) => renderValue(dimension.Value)),
    );
    expect(watched.filter((name) => name.startsWith('<Worker'))).toHaveLength(WORD_COUNT_QUEUES.length * 3);
  });

  test('stops the synth with a clear message: RabbitMQ bus, a timeout over the visibility timeout, a queue without a handler', () => {
    expect(() => synthStack({ workers: 'lambda', bus: 'rabbitmq' })).toThrow(
      /-c workers=lambda needs -c bus=sqs, not rabbitmq: Lambda workers take their requests from SQS step queues/,
    );
    expect(() => synthStack({ workers: 'lambda', workerTimeout: '10m' })).toThrow(
      /-c workerTimeout=600s is longer than -c stepVisibilityTimeout=300s/,
    );
    expect(() => synthStack({ workers: 'lambda', workerTimeout: '16m' })).toThrow(
      /-c workerTimeout=16m: expected whole seconds from 1 to 900/,
    );
    // The infra fixture's queues (summing, word-counter) have no export in the word-count module.
    expect(() => synthStack({ workers: 'lambda' })).toThrow(
      /exports no handler for step queue "summing" \(export summing\), step queue "word-counter" \(export wordCounter\)/,
    );
  });
});

describe('Function: workerExportName and checkWorkerExports', () => {
  test('a step queue is served by its name in camelCase', () => {
    expect(['book-split', 'sum_splits', 'a--b', 'plain'].map(workerExportName)).toEqual([
      'bookSplit',
      'sumSplits',
      'aB',
      'plain',
    ]);
  });

  test('finds const, function and listed exports, and names what is missing', () => {
    const source = [
      'export const bookSplit = lambdaWorker(split);',
      'export async function storeTitle(event, context) {}',
      'export { counting as segmentWordCounts };',
    ].join('\n');
    expect(() =>
      checkWorkerExports('w.ts', source, ['book-split', 'store-title', 'segment-word-counts']),
    ).not.toThrow();
    expect(() => checkWorkerExports('w.ts', source, ['book-split', 'sum-splits'])).toThrow(
      /w\.ts exports no handler for step queue "sum-splits" \(export sumSplits\)/,
    );
  });
});
