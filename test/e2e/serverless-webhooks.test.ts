import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Container, createContainer } from '../../functions/aws/container.js';
import { type HandlerEnvironment, readHandlerEnvironment } from '../../functions/aws/environment.js';
import { sqsBusFactory } from '../../functions/aws/sqs-bus-factory.js';
import { createApiHandler } from '../../functions/handlers/api.js';
import { createTimersHandler } from '../../functions/handlers/timers.js';
import { aLambdaContext, anApiEvent, aScheduledEvent } from '../support/aws-events.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../support/dynamodb-local.js';
import { createQueue, type Fauxqs, startSqsEmulator, uniqueQueuePrefix } from '../support/fauxqs.js';
import { recordingTelemetry } from '../support/recording-telemetry.js';
import { documentedVerifier, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/*
 * Webhooks in the serverless simulation: the API and timers handlers on DynamoDB Local and fauxqs.
 * A transition records its deliveries in the table; the timers function's sweep posts them.
 */

const SECRET = 'whsec_9d2c-deployed-never-stores-this';
const secrets = {
  resolve: async (names: readonly string[]) =>
    new Map(names.filter((name) => name === 'HOOK_KEY').map((name) => [name, SECRET])),
};

const workflow = (url: string) => `workflows:
  - name: approval
    notify:
      url: ${url}
      events: [step.waiting, job.completed]
      secret: HOOK_KEY
    steps:
      - name: approve
        type: signal
`;

describe('serverless: webhooks recorded by the API function, posted by the timers sweep', {
  timeout: 120_000,
}, () => {
  let dynamo: DynamoDbLocal;
  let sqs: Fauxqs;
  let hooks: WebhookReceiver;
  let base: Record<string, string>;
  const containers: Container[] = [];

  const container = async (env: HandlerEnvironment) => {
    const made = await createContainer(env, {
      buses: { sqs: sqsBusFactory },
      clients: { dynamodb: dynamo.newClient(), sqs: sqs.newClient() },
      telemetry: recordingTelemetry(),
      secrets,
    });
    containers.push(made);
    return made;
  };
  const callOn = async (
    api: ReturnType<typeof createApiHandler>,
    method: string,
    path: string,
    body?: string,
  ) => {
    const result = await api(
      anApiEvent(method, path, body === undefined ? {} : { body }),
      aLambdaContext(29_000),
    );
    return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
  };

  beforeAll(async () => {
    [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
    hooks = await startReceiver({ status: 200 });
    const tableName = uniqueTableName('switchyard-hooks');
    await createSwitchyardTable(dynamo.client, tableName);
    const prefix = uniqueQueuePrefix('hooks');
    const reply = await createQueue(sqs.client, `${prefix}workflow-manager`);
    const timers = await createQueue(sqs.client, `${prefix}switchyard-timers`);
    const stepDlq = await createQueue(sqs.client, `${prefix}switchyard-steps-dlq`);
    base = {
      TABLE_NAME: tableName,
      BUS: 'sqs',
      QUEUE_PREFIX: prefix,
      REPLY_QUEUE_URL: reply.url,
      TIMER_QUEUE_URL: timers.url,
      STEP_QUEUE_DLQ_ARN: stepDlq.arn,
      LOG_LEVEL: 'INFO',
    };
  }, 60_000);

  afterAll(async () => {
    for (const made of containers) made.manager.stop();
    await hooks?.close();
    await Promise.all([dynamo?.stop(), sqs?.stop()]);
  });

  it('refuses a plain http target at registration: deployed, deliveries go over https only', async () => {
    const api = createApiHandler({
      ...(await container(readHandlerEnvironment(base))),
      maxBodyBytes: 256 * 1024,
    });
    const refused = await callOn(api, 'PUT', '/api/workflow/approval', workflow(hooks.url));
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('must use https: this deployment posts only over https');
    expect((await callOn(api, 'GET', '/api/workflow/approval')).status).toBe(404);
  });

  it("posts a job's events from the sweep, signed, and logs them delivered in the table", async () => {
    // A receiver inside the network, on plain http: the stack's -c notifyHttpsOnly=false.
    const env = readHandlerEnvironment({ ...base, NOTIFY_HTTPS_ONLY: 'false' });
    const api = createApiHandler({ ...(await container(env)), maxBodyBytes: env.maxBodyBytes });
    expect((await callOn(api, 'PUT', '/api/workflow/approval', workflow(hooks.url))).status).toBe(201);
    const id = (await callOn(api, 'POST', '/api/workflow/approval', '{}')).body.id as string;
    expect((await callOn(api, 'POST', `/api/job/${id}/signal/approve`, '{}')).status).toBe(200);
    expect((await callOn(api, 'GET', `/api/job/${id}`)).body.status).toBe('completed');
    // Recorded with the transitions, not posted by the API function.
    const recorded = (await callOn(api, 'GET', `/api/job/${id}/deliveries`)).body.deliveries as {
      type: string;
      state: string;
    }[];
    expect(recorded.map((d) => [d.type, d.state])).toEqual([
      ['step.waiting', 'pending'],
      ['job.completed', 'pending'],
    ]);
    expect(hooks.posts).toHaveLength(0);

    const timersContainer = await container(env);
    const timers = createTimersHandler(timersContainer);
    await timers(aScheduledEvent(), aLambdaContext(60_000));
    const posts = await hooks.received(2);
    const verify = await documentedVerifier();
    expect(posts.map((post) => JSON.parse(post.body).type).sort()).toEqual(['job.completed', 'step.waiting']);
    for (const post of posts)
      expect(verify(post.headers['switchyard-signature'], post.body, SECRET)).toBe(true);
    const delivered = (await callOn(api, 'GET', `/api/job/${id}/deliveries`)).body.deliveries as {
      state: string;
      attempts: number;
    }[];
    expect(delivered.map((d) => [d.state, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ]);
    // Every item of the table: the secret's value is in none.
    const { ScanCommand } = await import('@aws-sdk/client-dynamodb');
    const scan = await dynamo.client.send(new ScanCommand({ TableName: base.TABLE_NAME }));
    expect(JSON.stringify(scan.Items)).not.toContain(SECRET);
    expect(JSON.stringify(scan.Items)).toContain('HOOK_KEY');
  });
});
