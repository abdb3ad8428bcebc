import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWordCountWorkers } from '../../examples/word-counts/workers.js';
import type { Worker } from '../../functions/worker/index.js';
import { runSmoke, type SmokeBus, type SmokeCloud } from '../../infra/smoke/smoke.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { AMQP_URL } from '../support/rabbitmq.js';

/*
 * `npm run smoke:aws`'s logic (infra/smoke/smoke.ts) against the simulation: "deploying" starts
 * `switchyard serve` on the real RabbitMQ with the word-count example's workflows and workers, its API
 * reached over HTTP as API Gateway would be; "destroying" stops them. The real account's side
 * (infra/smoke/cdk-cloud.ts: the CDK CLI and the AWS CLI) is the same interface.
 */

interface Deployed {
  serve: TestServe;
  workers: Worker[];
  dataDir: string;
}

function simulatedCloud(alarmStates: Record<string, string>, events: string[]): SmokeCloud {
  const deployed = new Map<SmokeBus, Deployed>();
  return {
    async deploy(bus) {
      events.push(`deploy ${bus}`);
      const serve = await startTestServe(await readFile('examples/word-counts/workflows.yaml', 'utf8'));
      const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-smoke-data-'));
      const workers = await startWordCountWorkers({ amqpUrl: AMQP_URL, dataDir });
      deployed.set(bus, { serve, workers, dataDir });
      return {
        workers: true,
        async call(method, path, body, headers) {
          const { status, body: answer } = await serve.api(method, path, body, headers);
          return { status, body: answer };
        },
      };
    },
    async alarms(bus) {
      events.push(`alarms ${bus}`);
      return Object.entries(alarmStates).map(([name, state]) => ({ name, state }));
    },
    async destroy(bus) {
      events.push(`destroy ${bus}`);
      const stack = deployed.get(bus);
      deployed.delete(bus);
      if (!stack) return;
      await Promise.all(stack.workers.map((worker) => worker.stop()));
      await stack.serve.stop();
      await rm(stack.dataDir, { recursive: true, force: true });
    },
  };
}

describe('npm run smoke:aws, its logic against the simulation', () => {
  const lines: string[] = [];
  afterAll(() => {
    if (lines.length) console.info(lines.join('\n'));
  });

  it('deploys, counts the words through the API, sees a schedule fire, reads the alarms, and destroys the stack', async () => {
    // Prepare
    const events: string[] = [];
    const cloud = simulatedCloud(
      { 'SwitchyardSmokeSqs-RepliesErrors': 'OK', 'SwitchyardSmokeSqs-ApiLatency': 'INSUFFICIENT_DATA' },
      events,
    );

    // Act
    const [result] = await runSmoke(cloud, { buses: ['sqs'], log: (line) => lines.push(line), pollMs: 500 });

    // Assess
    expect(result?.checks.map((check) => [check.name, check.ok])).toEqual([
      ['deploy', true],
      ['word count through the API', true],
      ['a schedule fires', true],
      ['alarms', true],
      ['destroy', true],
    ]);
    expect(result?.ok).toBe(true);
    expect(events).toEqual(['deploy sqs', 'alarms sqs', 'destroy sqs']);
  }, 300_000);

  it('fails on an alarm in ALARM, naming it, and still destroys the stack', async () => {
    // Prepare: a stack that answers nothing (the word count cannot start), and a firing alarm.
    const events: string[] = [];
    const cloud: SmokeCloud = {
      deploy: async (bus) => {
        events.push(`deploy ${bus}`);
        return { workers: true, call: async () => ({ status: 503, body: { error: 'down' } }) };
      },
      alarms: async () => [{ name: 'SwitchyardSmokeSqs-TableWriteThrottleEvents', state: 'ALARM' }],
      destroy: async (bus) => {
        events.push(`destroy ${bus}`);
      },
    };

    // Act
    const [result] = await runSmoke(cloud, { buses: ['sqs'], log: () => {}, pollMs: 10 });

    // Assess
    expect(result?.ok).toBe(false);
    const failed = Object.fromEntries((result?.checks ?? []).map((check) => [check.name, check]));
    expect(failed['word count through the API']?.detail).toMatch(/start answered 503/);
    expect(failed.alarms?.detail).toBe('in ALARM: SwitchyardSmokeSqs-TableWriteThrottleEvents');
    expect(events).toEqual(['deploy sqs', 'destroy sqs']);
  });
});
