import { describe, expect, it } from 'vitest';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

// Queues and vhosts belong to namespaces, and only the operator says which (issue: "Queue prefixes
// protect nobody", "Vhosts are the caller's choice"). RELIABILITY.md's security table names this file.

const ROOT = 'the-root-token';
const asRoot = { authorization: `Bearer ${ROOT}` };

const billing = (queue: string, extra = '') => `workflows:
  - name: billing${extra}
    steps:
      - name: charge
        queue: ${queue}
`;

async function aWorld() {
  const world = new SimulatedWorld();
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024, token: ROOT });
  const call = (method: string, path: string, body = '', headers: Record<string, string> = asRoot) =>
    callApi(deps, { method, path, body, headers });
  const must = async (method: string, path: string, body = '') => {
    const response = await call(method, path, body);
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.body}`);
    return JSON.parse(response.body) as Record<string, unknown>;
  };
  await must('PUT', '/api/namespaces/team-b', '{"queuePrefix":"team-b."}');
  await must('PUT', '/api/ns/team-b/workflow/billing', billing('charge'));
  const token = async (namespace: string, role: string) =>
    (await must('POST', '/api/tokens', JSON.stringify({ namespace, role }))).secret as string;
  const adminA = { authorization: `Bearer ${await token('team-a', 'admin')}` };
  const adminDefault = { authorization: `Bearer ${await token('default', 'admin')}` };
  const stored = async () =>
    JSON.stringify({
      workflows: await world.store.listWorkflows(),
      namespaces: await world.store.listNamespaceSettings(),
      sent: world.sent.length,
    });
  const callStart = (namespace: string, vhost: string, headers: Record<string, string>) =>
    callApi(deps, {
      method: 'POST',
      path: namespace === 'default' ? '/api/workflow/billing' : `/api/ns/${namespace}/workflow/billing`,
      query: { vhost },
      body: '{}',
      headers,
    });
  return { world, call, must, callStart, adminA, adminDefault, stored };
}

describe('Queues and vhosts belong to namespaces: set by the operator, enforced at registration and start', () => {
  it("a namespace admin cannot give itself another namespace's prefix: 403, nothing changed", async () => {
    const w = await aWorld();
    const before = await w.stored();
    const response = await w.call('PUT', '/api/namespaces/team-a', '{"queuePrefix":"team-b."}', w.adminA);
    expect([response.status, errorOf(response).code]).toEqual([403, 'forbidden']);
    const own = await w.call('PUT', '/api/namespaces/team-a', '{"vhosts":["billing"]}', w.adminA);
    expect(own.status).toBe(403);
    expect(await w.stored()).toBe(before);
  });

  it("refuses a workflow whose document states another namespace's prefix, or whose queue is another's", async () => {
    const w = await aWorld();
    await w.must('PUT', '/api/namespaces/team-a', '{"queuePrefix":"team-a."}');
    const before = await w.stored();

    const stated = await w.call(
      'PUT',
      '/api/ns/team-a/workflow/billing',
      `queuePrefix: team-b.\n${billing('charge')}`,
      w.adminA,
    );
    expect([stated.status, errorOf(stated).message]).toEqual([
      400,
      `the document states queuePrefix "team-b.", but namespace "team-a"'s is "team-a." (the operator's setting): leave the key out or state that one`,
    ]);
    expect(await w.stored()).toBe(before);
    // The prefix is put before a queue that lacks it, so team-b.charge becomes team-a.team-b.charge:
    // the namespace's own, never team-b's.
    const named = await w.call('PUT', '/api/ns/team-a/workflow/billing', billing('team-b.charge'), w.adminA);
    expect(named.status).toBe(201);
    const definition = JSON.parse(
      (await w.call('GET', '/api/ns/team-a/workflow/billing/definition', '', w.adminA)).body,
    ).definition;
    expect(definition.steps[0].queue).toBe('team-a.team-b.charge');
  });

  it("refuses, in a namespace without a prefix, a queue under another's prefix or of the manager", async () => {
    const w = await aWorld();
    const before = await w.stored();
    for (const [queue, message] of [
      ['team-b.charge', `queue "team-b.charge" starts with "team-b.", the queue prefix of another namespace`],
      ['workflow-manager.dead-letters', "named like the manager's own queues"],
      ['switchyard.dead-letters', "named like the manager's own queues"],
    ] as const) {
      for (const path of ['/api/ns/team-a/workflow/billing', '/api/workflow/billing']) {
        const admin = path.startsWith('/api/ns/') ? w.adminA : w.adminDefault;
        const response = await w.call('PUT', path, billing(queue), admin);
        expect([response.status, errorOf(response).message], `${path} ${queue}`).toEqual([
          400,
          expect.stringContaining(message),
        ]);
      }
    }
    expect(await w.stored()).toBe(before);
  });

  it("refuses vhosts the operator has not allowed the namespace, in a definition and at a job's start", async () => {
    const w = await aWorld();
    const before = await w.stored();
    const listed = await w.call(
      'PUT',
      '/api/ns/team-a/workflow/billing',
      billing('charge', '\n    vhosts: [other]'),
      w.adminA,
    );
    expect([listed.status, errorOf(listed).message]).toEqual([
      400,
      expect.stringContaining('vhost "other" is not allowed in namespace "team-a"'),
    ]);
    expect(await w.stored()).toBe(before);

    await w.must('PUT', '/api/ns/team-a/workflow/billing', billing('charge'));
    const registered = await w.stored();
    const started = await w.callStart('team-a', 'other', w.adminA);
    expect([started.status, errorOf(started).message]).toEqual([
      400,
      expect.stringContaining('vhost "other" is not allowed in namespace "team-a"'),
    ]);
    expect(await w.stored()).toBe(registered);

    await w.must('PUT', '/api/namespaces/team-a', '{"vhosts":["other"]}');
    expect((await w.callStart('team-a', 'other', w.adminA)).status).toBe(201);
    // default keeps the original's behaviour until the operator lists vhosts for it.
    await w.must('PUT', '/api/workflow/billing', billing('charge'));
    expect((await w.callStart('default', 'anywhere', w.adminDefault)).status).toBe(201);
    await w.must('PUT', '/api/namespaces/default', '{"vhosts":["/"]}');
    expect((await w.callStart('default', 'anywhere', w.adminDefault)).status).toBe(400);
  });

  it("refuses an operator's prefix that overlaps another's, or that another namespace's workflows already send to", async () => {
    const w = await aWorld();
    await w.must('PUT', '/api/workflow/legacy', billing('shared.charge').replace('billing', 'legacy'));
    const before = await w.stored();
    const overlap = await w.call('PUT', '/api/namespaces/team-a', '{"queuePrefix":"team-b.x."}');
    expect([overlap.status, errorOf(overlap).message]).toEqual([
      400,
      expect.stringContaining(`overlaps namespace "team-b"'s "team-b."`),
    ]);
    const taken = await w.call('PUT', '/api/namespaces/team-a', '{"queuePrefix":"shared."}');
    expect([taken.status, errorOf(taken).message]).toEqual([
      400,
      expect.stringContaining('workflow "legacy" of another namespace sends to queue "shared.charge"'),
    ]);
    expect(await w.stored()).toBe(before);
  });

  it('shows a namespace its own queues only, and its settings to its own tokens', async () => {
    const w = await aWorld();
    await w.must('PUT', '/api/namespaces/team-a', '{"queuePrefix":"team-a."}');
    await w.must('PUT', '/api/ns/team-a/workflow/billing', billing('charge'));
    const queues = JSON.parse((await w.call('GET', '/api/ns/team-a/queues', '', w.adminA)).body).queues;
    expect(queues.map((queue: { queue: string }) => queue.queue)).toEqual(['team-a.charge']);
    const own = await w.call('GET', '/api/namespaces/team-a', '', w.adminA);
    expect(JSON.parse(own.body)).toMatchObject({ namespace: 'team-a', queuePrefix: 'team-a.' });
    expect((await w.call('GET', '/api/namespaces/team-b', '', w.adminA)).status).toBe(404);
  });
});
