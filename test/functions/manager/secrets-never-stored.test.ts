import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { SecretResolver, StepRequest } from '../../../engine/index.js';
import { DynamoDbStore } from '../../../functions/adapters/dynamodb/store.js';
import { secretResolvingBus } from '../../../functions/manager/secret-bus.js';
import { createSwitchyardTable, startDynamoDbLocal, uniqueTableName } from '../../support/dynamodb-local.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const SECRET = 'sk_dynamo_5d1e-never-stored';
const WORKFLOWS = `workflows:
  - name: pay
    steps:
      - name: charge
        timeout: 1m
        params: { apiKey: { secret: payments/api-key } }
      - name: notify
        depends: [ charge ]
`;

const resolver: SecretResolver = {
  async resolve(names) {
    return new Map(names.filter((name) => name === 'payments/api-key').map((name) => [name, SECRET]));
  },
};

describe('Secrets never reach a store: only the request handed to the broker holds the value', () => {
  it('on DynamoDB Local: the broker gets the value; no item of the table holds it, across the job’s whole course', async () => {
    const dynamo = await startDynamoDbLocal();
    onTestFinished(() => dynamo.stop());
    const tableName = uniqueTableName('secrets');
    await createSwitchyardTable(dynamo.client, tableName);
    const store = new DynamoDbStore({ client: dynamo.client, tableName });
    const world = new SimulatedWorld(store);
    await world.register(WORKFLOWS);
    const sent: StepRequest[] = [];
    const bus = secretResolvingBus(
      { ...world.bus, send: async (requests) => void sent.push(...requests) },
      resolver,
    );

    // The manager stores the request with its reference; the bus resolves it as it sends.
    const id = await world.start('pay', { order: 'o-1' });
    const stored = world.take();
    expect(stored[0]?.body).toEqual({ order: 'o-1', apiKey: { secret: 'payments/api-key' } });
    expect(stored[0]?.secrets).toEqual([{ path: ['apiKey'], name: 'payments/api-key' }]);
    await bus.send(stored);
    expect(sent[0]?.body).toEqual({ order: 'o-1', apiKey: SECRET });
    expect(sent[0]).not.toHaveProperty('secrets');
    await world.reply(stored[0] as StepRequest, { charged: true });
    await world.reply(world.take()[0] as StepRequest, {});
    expect((await world.job(id)).status).toBe('completed');

    // Every item as stored (plain attributes), and the job read back whole (its compressed JSON decoded).
    const items = await dynamo.client.send(new ScanCommand({ TableName: tableName }));
    const text = JSON.stringify(items.Items);
    expect(text.length).toBeGreaterThan(100);
    expect(text).not.toContain(SECRET);
    expect(JSON.stringify(await store.getJob(id))).not.toContain(SECRET);
  }, 120_000);

  it('a request naming a secret the resolver lacks is not sent, and says which', async () => {
    const sent: StepRequest[] = [];
    const bus = secretResolvingBus(
      {
        send: async (requests) => void sent.push(...requests),
        ensureQueues: async () => {},
        ping: async () => {},
        close: async () => {},
      },
      resolver,
    );
    const request: StepRequest = {
      jobId: 'j',
      step: 's',
      queue: 'q',
      vhost: null,
      correlationId: 'j:s',
      attempt: 1,
      body: { key: { secret: 'missing' } },
      secrets: [{ path: ['key'], name: 'missing' }],
    };
    const plain: StepRequest = { ...request, correlationId: 'j:t', step: 't', body: {}, secrets: undefined };
    delete plain.secrets;
    await expect(bus.send([request, plain])).rejects.toMatchObject({
      errors: [
        {
          name: 'UndeliverableError',
          correlationId: 'j:s',
          message: 'not sent: secret "missing" is not set',
        },
      ],
    });
    expect(sent).toEqual([plain]);
  });
});
