import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { uniqueName } from '../support/rabbitmq.js';

const suffix = uniqueName('api');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: pipeline
    description: two steps
    steps:
      - name: first
        queue: ${q('first')}
      - name: second
        queue: ${q('second')}
        depends: [ first ]
  - name: held
    steps:
      - name: never
        queue: ${q('never')}
  - name: approval
    steps:
      - name: prepare
        queue: ${q('prepare')}
      - name: approve
        type: signal
        depends: [ prepare ]
  - name: breaks
    steps:
      - name: fragile
        queue: ${q('fragile')}
  - name: fan
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: hold
            queue: ${q('hold')}
`;

type ErrorBody = { error: { code: string; message: string } };

describe('The HTTP API, route by route (serve on RabbitMQ and SQLite)', () => {
  let serve: TestServe;
  let workers: PlainWorkers;
  let fragileCalls = 0;

  const start = async (workflow: string, input = '{}') => {
    const response = await serve.api<{ id: string }>('POST', `/api/workflow/${workflow}`, input);
    expect(response.status).toBe(201);
    return response.body.id;
  };
  const finished = (id: string) =>
    eventually(async () => {
      const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}`);
      return body.status === 'running' || body.status === 'waiting' || body.status === 'pending'
        ? false
        : body;
    });

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS, { maxBodyBytes: 4096 });
    workers = await startPlainWorkers({
      [q('first')]: (input) => ({ ...input, first: 1 }),
      [q('second')]: (input) => ({ ...input, second: 2 }),
      [q('prepare')]: (input) => ({ ...input, prepared: true }),
      // Replies that are not JSON objects fail the attempt (and the job: no retries).
      [q('fragile')]: (input) =>
        ++fragileCalls === 1 ? (['not', 'an', 'object'] as never) : { ...input, fixed: true },
    });
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
  });

  describe('workflows', () => {
    it('GET /api/workflows lists each workflow with its version and running jobs', async () => {
      const { status, body } = await serve.api<
        {
          name: string;
          vhost: string;
          job_count: number;
          version: number;
          enabled: boolean;
          description: string;
        }[]
      >('GET', '/api/workflows');
      expect(status).toBe(200);
      expect(body.find((w) => w.name === 'pipeline')).toMatchObject({
        vhost: '/',
        version: 1,
        enabled: true,
        description: 'two steps',
      });
      expect(body.map((w) => w.name).sort()).toEqual(['approval', 'breaks', 'fan', 'held', 'pipeline']);
    });

    it('GET /api/workflow/{name} gives running and recently completed ids, as the original', async () => {
      const done = await start('pipeline');
      await finished(done);
      const running = await start('held');
      const pipeline = await serve.api<{ running: string[]; completed: string[] }>(
        'GET',
        '/api/workflow/pipeline?interval=0',
      );
      expect(pipeline.body.completed).toContain(done);
      const held = await serve.api<{ running: string[]; completed: string[] }>('GET', '/api/workflow/held');
      expect(held.body).toEqual({ running: [running], queued: [], completed: [] });
      const missing = await serve.api<ErrorBody>('GET', '/api/workflow/nope');
      expect(missing.status).toBe(404);
      expect(missing.body.error).toEqual({ code: 'not_found', message: 'no workflow named "nope"' });
      expect((await serve.api('GET', '/api/workflow/pipeline?interval=-1')).status).toBe(400);
    });

    it('PUT /api/workflow/{name} registers versions; GET …/definition reads them', async () => {
      const name = 'versioned';
      const v1 = `name: ${name}\nsteps:\n  - name: only\n    queue: ${q('only')}\n`;
      const first = await serve.api<{ version: number }>('PUT', `/api/workflow/${name}`, v1, {
        'content-type': 'application/yaml',
      });
      expect([first.status, first.body.version]).toEqual([201, 1]);
      const again = await serve.api<{ version: number }>('PUT', `/api/workflow/${name}`, v1);
      expect([again.status, again.body.version]).toEqual([200, 1]);
      const v2 = JSON.stringify({
        workflows: [{ name, description: 'second', steps: [{ name: 'only', queue: q('only') }] }],
      });
      const second = await serve.api<{ version: number }>('PUT', `/api/workflow/${name}`, v2, {
        'content-type': 'application/json',
      });
      expect([second.status, second.body.version]).toEqual([201, 2]);
      const latest = await serve.api<{
        version: number;
        definition: { description?: string };
        versions: { version: number }[];
      }>('GET', `/api/workflow/${name}/definition`);
      expect(latest.body.version).toBe(2);
      expect(latest.body.definition.description).toBe('second');
      expect(latest.body.versions.map((v) => v.version)).toEqual([1, 2]);
      const old = await serve.api<{ definition: { description?: string } }>(
        'GET',
        `/api/workflow/${name}/definition?version=1`,
      );
      expect(old.body.definition.description).toBeUndefined();
      expect((await serve.api('GET', `/api/workflow/${name}/definition?version=7`)).status).toBe(404);
    });

    it('PUT refuses invalid definitions, names that differ from the path, and empty bodies, changing nothing', async () => {
      const invalid = await serve.api<ErrorBody>(
        'PUT',
        '/api/workflow/bad',
        'name: bad\nsteps:\n  - name: a\n    depends: [ b ]\n',
      );
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.message).toContain('depends on "b", which is not a step of this workflow');
      const mismatch = await serve.api<ErrorBody>(
        'PUT',
        '/api/workflow/other',
        'name: bad\nsteps: [ { name: a } ]\n',
      );
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.error.message).toBe(
        'the workflow in the body is named "bad", but the path names "other"',
      );
      expect((await serve.api('PUT', '/api/workflow/bad', '')).status).toBe(400);
      expect((await serve.api('GET', '/api/workflow/bad/definition')).status).toBe(404);
    });

    it('DELETE /api/workflow/{name} disables it: new jobs are refused until it is registered again', async () => {
      const name = 'retired';
      const yaml = `name: ${name}\nsteps:\n  - name: x\n    queue: ${q('x')}\n`;
      await serve.api('PUT', `/api/workflow/${name}`, yaml);
      const disabled = await serve.api<{ enabled: boolean }>('DELETE', `/api/workflow/${name}`);
      expect([disabled.status, disabled.body.enabled]).toEqual([200, false]);
      const refused = await serve.api<ErrorBody>('POST', `/api/workflow/${name}`, '{}');
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toBe(`workflow "${name}" is disabled: new jobs are refused`);
      await serve.api('PUT', `/api/workflow/${name}`, yaml);
      expect((await serve.api('POST', `/api/workflow/${name}`, '{}')).status).toBe(201);
      expect((await serve.api('DELETE', '/api/workflow/never-registered')).status).toBe(404);
    });
  });

  describe('starting jobs', () => {
    it('starts a job idempotently: the same id with the same input is 200, with another input 409', async () => {
      const id = crypto.randomUUID();
      const first = await serve.api<{ id: string }>('POST', `/api/workflow/held?id=${id}`, '{"a":1}');
      expect(first).toMatchObject({ status: 201, body: { id } });
      expect(await serve.api('POST', `/api/workflow/held?id=${id}`, '{"a":1}')).toMatchObject({
        status: 200,
        body: { id },
      });
      // The body's id names the job too; the body stays the job's input, so here the input differs.
      expect((await serve.api('POST', '/api/workflow/held', JSON.stringify({ id, a: 1 }))).status).toBe(409);
      const other = crypto.randomUUID();
      const body = JSON.stringify({ id: other, a: 1 });
      expect((await serve.api('POST', '/api/workflow/held', body)).status).toBe(201);
      expect((await serve.api('POST', '/api/workflow/held', body)).status).toBe(200);
      const conflict = await serve.api<ErrorBody>('POST', `/api/workflow/held?id=${id}`, '{"a":2}');
      expect(conflict.status).toBe(409);
      expect((await serve.api('POST', `/api/workflow/pipeline?id=${id}`, '{"a":1}')).status).toBe(409);
    });

    it.each([
      ['a body that is not JSON', '/api/workflow/held', 'a=1&b=2', 400, 'the job input: body is not JSON'],
      ['a list', '/api/workflow/held', '[1,2]', 400, 'the job input: body must be a JSON object, got list'],
      [
        'a bad id',
        '/api/workflow/held?id=12',
        '{}',
        400,
        'query parameter "id" must be a job id (a UUID), got "12"',
      ],
      [
        'a bad id in the body',
        '/api/workflow/held',
        '{"id": 7}',
        400,
        'the job input: "id" must be a job id (a UUID), got 7',
      ],
      ['an unknown workflow', '/api/workflow/nope', '{}', 404, 'no workflow named "nope"'],
      ['an unknown version', '/api/workflow/held?version=9', '{}', 404, 'workflow "held" has no version 9'],
    ])('refuses %s with a JSON error', async (_, path, body, status, message) => {
      const before = await serve.api<{ jobs: string[] }>('GET', '/api/jobs?status=all&limit=1000');
      const response = await serve.api<ErrorBody>('POST', path, body);
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(response.body.error.message.startsWith(message)).toBe(true);
      const after = await serve.api<{ jobs: string[] }>('GET', '/api/jobs?status=all&limit=1000');
      expect(after.body.jobs).toEqual(before.body.jobs);
    });

    it('refuses an id in the body that differs from ?id=', async () => {
      const response = await serve.api<ErrorBody>(
        'POST',
        `/api/workflow/held?id=${crypto.randomUUID()}`,
        JSON.stringify({ id: crypto.randomUUID() }),
      );
      expect(response.status).toBe(400);
    });

    it('refuses a body over the limit with 413', async () => {
      const response = await serve.api<ErrorBody>(
        'POST',
        '/api/workflow/held',
        JSON.stringify({ big: 'x'.repeat(5000) }),
      );
      expect(response.status).toBe(413);
      expect(response.body.error.code).toBe('payload_too_large');
    });
  });

  describe('jobs', () => {
    it('GET /api/jobs lists running top-level jobs by default, filters, pages and summarises', async () => {
      const ids = [await start('held'), await start('held'), await start('held')];
      const running = await serve.api<{ jobs: string[] }>('GET', '/api/jobs?workflow=held');
      for (const id of ids) expect(running.body.jobs).toContain(id);
      const first = await serve.api<{ jobs: string[]; cursor?: string }>(
        'GET',
        '/api/jobs?workflow=held&limit=1',
      );
      expect(first.body.jobs).toEqual([ids[2]]);
      const second = await serve.api<{ jobs: string[] }>(
        'GET',
        `/api/jobs?workflow=held&limit=1&cursor=${first.body.cursor}`,
      );
      expect(second.body.jobs).toEqual([ids[1]]);
      const detail = await serve.api<{
        jobs: { uuid: string; status: string; progress: { steps: number; stepsDone: number } }[];
      }>('GET', '/api/jobs?workflow=held&detail=1&limit=1');
      expect(detail.body.jobs[0]).toMatchObject({
        uuid: ids[2],
        status: 'running',
        progress: { steps: 1, stepsDone: 0 },
      });
      expect((await serve.api('GET', '/api/jobs?status=sleeping')).status).toBe(400);
      expect((await serve.api('GET', '/api/jobs?limit=0')).status).toBe(400);
    });

    it('GET /api/job/{id} gives the document in the original shape; ?wait answers on a change', async () => {
      const id = await start('pipeline', '{"in":true}');
      const done = await finished(id);
      expect(done).toMatchObject({
        uuid: id,
        workflow: 'pipeline',
        version: 1,
        parent: null,
        status: 'completed',
        input: { in: true },
      });
      expect(done.completed.map((entry) => entry.name)).toEqual(['__start__', 'first', 'second', '__end__']);
      expect(done.completed[1]?.elapsed).toBeGreaterThanOrEqual(0);
      expect(done.steps.first).toMatchObject({
        status: 'completed',
        attempt: 1,
        attempts: [{ attempt: 1, outcome: 'completed' }],
      });
      const started = Date.now();
      const held = await start('held');
      const waited = await serve.api<JobDocument>('GET', `/api/job/${held}?wait=1`);
      expect(waited.body.status).toBe('running');
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(waited.body.running).toEqual([expect.objectContaining({ name: 'never', attempt: 1 })]);
      const version = waited.headers.get('etag') as string;
      expect(version).toMatch(/^W\/".+"$/);
      const unchanged = await serve.api('GET', `/api/job/${held}?wait=1`, undefined, {
        'if-none-match': version,
      });
      expect(unchanged.status).toBe(304);
      expect(unchanged.body).toBeUndefined();
      expect(unchanged.headers.get('etag')).toBe(version);
      const moved = await serve.api<JobDocument>('GET', `/api/job/${id}?wait=20`, undefined, {
        'if-none-match': version,
      });
      expect(moved.status).toBe(200);
      expect(moved.body.status).toBe('completed');
      expect((await serve.api('GET', '/api/job/not-a-uuid')).status).toBe(400);
      expect((await serve.api('GET', `/api/job/${crypto.randomUUID()}`)).status).toBe(404);
    });

    it("GET /api/job/{id}/children pages a fan-out step's children", async () => {
      const id = await start('fan', JSON.stringify({ items: [1, 2, 3] }));
      const page = await serve.api<{ children: { index: number; status: string }[]; cursor?: string }>(
        'GET',
        `/api/job/${id}/children?step=each&limit=2`,
      );
      expect(page.body.children.map((child) => child.index)).toEqual([0, 1]);
      const rest = await serve.api<{ children: { index: number }[]; cursor?: string }>(
        'GET',
        `/api/job/${id}/children?step=each&limit=2&cursor=${page.body.cursor}`,
      );
      expect(rest.body.children.map((child) => child.index)).toEqual([2]);
      expect(rest.body.cursor).toBeUndefined();
      const document = await serve.api<JobDocument>('GET', `/api/job/${id}`);
      expect(document.body.running[0]?.tasks).toHaveLength(3);
      expect((await serve.api('GET', `/api/job/${id}/children`)).status).toBe(400);
      expect((await serve.api('GET', `/api/job/${id}/children?step=nope`)).status).toBe(400);
    });

    it('DELETE /api/job/{id} cancels, children included; a finished job is 409', async () => {
      const id = await start('fan', JSON.stringify({ items: [1, 2] }));
      const {
        body: { children },
      } = await serve.api<{ children: { uuid: string }[] }>('GET', `/api/job/${id}/children?step=each`);
      const cancelled = await serve.api<JobDocument>('DELETE', `/api/job/${children[0]?.uuid}`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ uuid: id, status: 'cancelled' });
      await eventually(async () => {
        const child = await serve.api<JobDocument>('GET', `/api/job/${children[1]?.uuid}`);
        return child.body.status === 'cancelled';
      });
      expect((await serve.api('DELETE', `/api/job/${id}`)).status).toBe(409);
    });

    it('POST /api/job/{id}/signal/{step} completes a ready signal step, the body over its input; otherwise 409 or 400', async () => {
      const id = await start('approval');
      await eventually(
        async () =>
          (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body.steps.approve?.status === 'running',
      );
      expect((await serve.api('POST', `/api/job/${id}/signal/prepare`, '{}')).status).toBe(409);
      expect((await serve.api('POST', `/api/job/${id}/signal/approve`, '[1]')).status).toBe(400);
      const signalled = await serve.api<JobDocument>('POST', `/api/job/${id}/signal/approve`, '{"ok":true}');
      expect(signalled.status).toBe(200);
      expect(signalled.body.status).toBe('completed');
      expect(signalled.body.result).toEqual({ prepared: true, ok: true });
      expect((await serve.api('POST', `/api/job/${id}/signal/approve`, '{}')).status).toBe(409);
    });

    it('POST /api/job/{id}/retry runs a failed job again; a completed one is 409', async () => {
      const id = await start('breaks', '{"v":1}');
      const failed = await finished(id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({
        step: 'fragile',
        attempt: 1,
        message: 'invalid reply: body must be a JSON object, got list',
      });
      const retried = await serve.api<JobDocument>('POST', `/api/job/${id}/retry`);
      expect(retried.status).toBe(200);
      expect(retried.body.status).toBe('running');
      const done = await finished(id);
      expect(done).toMatchObject({ status: 'completed', result: { v: 1, fixed: true } });
      expect((await serve.api('POST', `/api/job/${id}/retry`)).status).toBe(409);
    });
  });

  describe('system routes', () => {
    it('GET /healthz reports the store and the bus', async () => {
      expect(await serve.api('GET', '/healthz')).toMatchObject({
        status: 200,
        body: { status: 'ok', store: 'ok', bus: 'ok' },
      });
    });

    it('GET /metrics speaks the Prometheus text format', async () => {
      const { status, body, headers } = await serve.api<string>('GET', '/metrics');
      expect(status).toBe(200);
      expect(headers.get('content-type')).toContain('text/plain');
      expect(body).toContain('switchyard_steps_completed_total');
      expect(body).toMatch(/switchyard_jobs\{workflow="pipeline",status="completed"\} \d+/);
      // The jobs above were written: each write transaction was timed.
      expect(Number(body.match(/^switchyard_store_write_seconds_count (\d+)$/m)?.[1])).toBeGreaterThan(0);
    });

    it('GET /openapi.json and GET / answer without credentials', async () => {
      const openapi = await serve.api<{ openapi: string }>('GET', '/openapi.json');
      expect(openapi.body.openapi).toMatch(/^3\./);
      const page = await serve.api<string>('GET', '/');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
    });

    it('answers unknown routes with 404 and wrong methods with 405, as JSON', async () => {
      const missing = await serve.api<ErrorBody>('GET', '/api/nothing');
      expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
      const method = await serve.api<ErrorBody>('PATCH', '/api/jobs');
      expect([method.status, method.body.error.code]).toEqual([405, 'method_not_allowed']);
    });
  });
});

describe('Token auth (serve --token)', () => {
  let serve: TestServe;
  beforeAll(async () => {
    serve = await startTestServe(
      `workflows:\n  - name: w\n    steps:\n      - name: s\n        queue: ${q('token')}\n`,
      { token: 's3cret' },
    );
  });
  afterAll(async () => serve?.stop());

  it('requires the bearer token on the API, not on the dashboard page', async () => {
    expect((await serve.api<ErrorBody>('GET', '/api/workflows')).status).toBe(401);
    expect(
      (await serve.api<ErrorBody>('GET', '/api/workflows', undefined, { authorization: 'Bearer wrong' }))
        .status,
    ).toBe(401);
    expect(
      (await serve.api('GET', '/api/workflows', undefined, { authorization: 'Bearer s3cret' })).status,
    ).toBe(200);
    expect((await serve.api('POST', '/api/workflow/w', '{}')).status).toBe(401);
    expect((await serve.api('GET', '/')).status).toBe(200);
  });

  it('binds to 127.0.0.1 by default', () => {
    expect(new URL(serve.url).hostname).toBe('127.0.0.1');
  });
});
