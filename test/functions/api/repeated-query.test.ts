import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleApiGatewayEvent, routes } from '../../../functions/api/api-handler.js';
import type { ApiResponse } from '../../../functions/api/http.js';
import type { ApiDeps } from '../../../functions/api/router.js';
import { createHttpBridge } from '../../../functions/local/http-bridge.js';
import { errorOf, worldApi } from '../../support/api-calls.js';
import { anApiEvent } from '../../support/aws-events.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const A = '0b7e7d1c-5a43-4d0e-9d0f-1f5d2a3b4c5d';
const B = '1c8f8e2d-6b54-4e1f-8e1a-2a6e3b4c5d6e';

/** Every route, as a request to a concrete path. */
const EVERY_ROUTE = routes.map((route) => ({
  method: route.method,
  path: route.path
    .replace('{name}', 'one')
    .replace('{id}', A)
    .replace('{step}', 'a')
    .replace('{file+}', 'app.js'),
}));

interface Host {
  /** Sends `method path?id=A&id=B` with an empty JSON object as the body. */
  sendWithRepeatedId(method: string, path: string): Promise<ApiResponse>;
}

async function world(): Promise<{ world: SimulatedWorld; deps: ApiDeps }> {
  const simulated = new SimulatedWorld();
  await simulated.register('workflows:\n  - name: one\n    steps:\n      - name: a\n');
  return { world: simulated, deps: worldApi(simulated, { maxBodyBytes: 1024 }) };
}

const apiGateway = (deps: ApiDeps): Host => ({
  async sendWithRepeatedId(method, path) {
    const result = await handleApiGatewayEvent(
      anApiEvent(method, path, { query: { id: [A, B] }, body: '{}' }),
      deps,
    );
    return { status: result.statusCode, body: result.body };
  },
});

const servers: ReturnType<typeof createHttpBridge>[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

async function httpBridge(deps: ApiDeps): Promise<Host> {
  const server = createHttpBridge(deps);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    async sendWithRepeatedId(method, path) {
      const response = await fetch(`http://127.0.0.1:${port}${path}?id=${A}&id=${B}`, {
        method,
        body: method === 'GET' ? undefined : '{}',
      });
      return { status: response.status, body: await response.text() };
    },
  };
}

/** api.md: a query parameter given twice is ambiguous input, refused with a 400 that names it. */
describe.each<[string, (deps: ApiDeps) => Host | Promise<Host>]>([
  ['API Gateway (deployed)', apiGateway],
  ['the local HTTP bridge (serve)', httpBridge],
])('A repeated query parameter, through %s', (_, host) => {
  let api: { world: SimulatedWorld; deps: ApiDeps };
  let send: Host;
  beforeAll(async () => {
    api = await world();
    send = await host(api.deps);
  });

  it('starts no job: 400 naming the parameter', async () => {
    const response = await send.sendWithRepeatedId('POST', '/api/workflow/one');
    expect(response.status, response.body).toBe(400);
    expect(errorOf(response)).toEqual({
      code: 'bad_request',
      message: 'the query parameter "id" is given 2 times; give it once',
    });
    expect(await api.world.store.getJob(A)).toBeUndefined();
    expect(await api.world.store.getJob(B)).toBeUndefined();
    expect(api.world.take()).toEqual([]);
  });

  it.each(EVERY_ROUTE)('is refused by $method $path', async ({ method, path }) => {
    const response = await send.sendWithRepeatedId(method, path);
    expect([response.status, errorOf(response).code], response.body).toEqual([400, 'bad_request']);
    expect(errorOf(response).message).toContain('"id"');
  });
});

describe('An API Gateway event without the multi-valued query map', () => {
  it('is read from its single-valued map', async () => {
    const { world: simulated, deps } = await world();
    const event = { ...anApiEvent('POST', '/api/workflow/one', { query: { id: B }, body: '{}' }) };
    event.multiValueQueryStringParameters = null;
    const result = await handleApiGatewayEvent(event, deps);
    expect([result.statusCode, result.body]).toEqual([201, JSON.stringify({ id: B })]);
    expect(await simulated.store.getJob(B)).toBeDefined();
  });
});
