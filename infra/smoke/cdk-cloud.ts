import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SmokeBus, SmokeCloud, SmokeStack } from './smoke.js';

const run = promisify(execFile);

export interface CdkCloudOptions {
  /** The AWS CLI / CDK profile (`--profile`). */
  profile: string;
  /** Each stack's name: `<prefix><Bus>`. */
  stackPrefix: string;
  /**
   * The API in front (`-c api=`): the REST API with its API key, or the HTTP API with the root token
   * from Secrets Manager (its default `-c auth=token`). @default rest
   */
  api?: 'rest' | 'http';
  log: (line: string) => void;
}

/**
 * A real account: stacks deployed and destroyed with the CDK CLI (`npx cdk deploy|destroy`), the API
 * key (or, with `api: 'http'`, the root token) read and the alarms described with the AWS CLI, all
 * under `--profile`. Each stack is throwaway:
 * `-c destroy=true` (the table and logs go with it); on SQS the word count's workers are Lambda
 * functions (`-c workers=lambda`); on Amazon MQ the broker is private, so no worker reaches it from here.
 */
export function cdkCloud(options: CdkCloudOptions): SmokeCloud {
  const stackName = (bus: SmokeBus) => `${options.stackPrefix}${bus === 'sqs' ? 'Sqs' : 'Mq'}`;
  const profile = ['--profile', options.profile];
  const http = options.api === 'http';
  const cli = async (command: string, args: string[]): Promise<string> => {
    options.log(`$ ${command} ${args.join(' ')}`);
    const { stdout } = await run(command, args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  };
  const apiKey = async (id: string) =>
    (
      await cli('aws', [
        'apigateway',
        'get-api-key',
        ...profile,
        '--api-key',
        id,
        '--include-value',
        '--query',
        'value',
        '--output',
        'text',
      ])
    ).trim();
  const rootToken = async (secretArn: string) =>
    (
      await cli('aws', [
        'secretsmanager',
        'get-secret-value',
        ...profile,
        '--secret-id',
        secretArn,
        '--query',
        'SecretString',
        '--output',
        'text',
      ])
    ).trim();
  return {
    async deploy(bus) {
      const dir = await mkdtemp(join(tmpdir(), 'switchyard-smoke-'));
      try {
        const outputsFile = join(dir, 'outputs.json');
        await cli('npx', [
          'cdk',
          'deploy',
          ...profile,
          '--require-approval',
          'never',
          '--outputs-file',
          outputsFile,
          '-c',
          `stackName=${stackName(bus)}`,
          '-c',
          `bus=${bus}`,
          '-c',
          'destroy=true',
          ...(http ? ['-c', 'api=http'] : ['-c', 'auth=apiKey']),
          '-c',
          'workflows=examples/word-counts/workflows.yaml',
          ...(bus === 'sqs' ? ['-c', 'workers=lambda'] : []),
        ]);
        const outputs = JSON.parse(await readFile(outputsFile, 'utf8'))[stackName(bus)] as Record<
          string,
          string
        >;
        const apiUrl = (outputs.ApiUrl ?? '').replace(/\/$/, '');
        const credential = http
          ? { authorization: `Bearer ${await rootToken(outputs.RootTokenSecretArn ?? '')}` }
          : { 'x-api-key': await apiKey(outputs.ApiKeyId ?? '') };
        const stack: SmokeStack = {
          workers: bus === 'sqs',
          async call(method, path, body, headers = {}) {
            const response = await fetch(`${apiUrl}${path}`, {
              method,
              body,
              headers: { ...credential, ...headers },
            });
            const text = await response.text();
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: kept as text
            }
            return { status: response.status, body: parsed };
          },
        };
        return stack;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    async alarms(bus) {
      const described = JSON.parse(
        await cli('aws', [
          'cloudwatch',
          'describe-alarms',
          ...profile,
          '--alarm-name-prefix',
          stackName(bus),
          '--output',
          'json',
        ]),
      ) as { MetricAlarms?: { AlarmName: string; StateValue: string }[] };
      return (described.MetricAlarms ?? []).map((alarm) => ({
        name: alarm.AlarmName,
        state: alarm.StateValue,
      }));
    },
    async destroy(bus) {
      await cli('npx', [
        'cdk',
        'destroy',
        ...profile,
        '--force',
        '-c',
        `stackName=${stackName(bus)}`,
        '-c',
        `bus=${bus}`,
      ]);
    },
  };
}
