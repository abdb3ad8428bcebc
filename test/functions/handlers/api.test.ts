import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createApiHandler } from '../../../functions/handlers/api.js';
import { aLambdaContext, anApiEvent } from '../../support/aws-events.js';
import { type MemoryManager, memoryManager } from '../../support/memory-manager.js';

const DEFINITION = `
workflows:
  - name: greet
    steps:
      - name: hello
`;

function apiHandler(harness: MemoryManager, dashboard?: Map<string, { contentType: string; body: string }>) {
  return createApiHandler({ ...harness, maxBodyBytes: 1024, dashboard });
}

describe('Handler: api', () => {
  it('registers a workflow and starts a job whose request is sent before it answers', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = apiHandler(harness);
    const id = randomUUID();

    // Act
    const put = await handler(
      anApiEvent('PUT', '/api/workflow/greet', { body: DEFINITION }),
      aLambdaContext(),
    );
    const started = await handler(
      anApiEvent('POST', '/api/workflow/greet', { query: { id }, body: { who: 'world' } }),
    );

    // Assess
    expect(put.statusCode).toBe(201);
    expect(JSON.parse(put.body)).toMatchObject({ version: 1 });
    expect(started.statusCode).toBe(201);
    expect(JSON.parse(started.body)).toEqual({ id });
    expect(harness.bus.sent.map((request) => request.correlationId)).toEqual([`${id}:hello`]);
    expect(harness.telemetry.flushes).toBe(2);
  });

  it("answers ?wait at once (capped at 0 s deployed): 304 while the job is at the caller's version, holding no invocation", async () => {
    // Prepare: a running job, and the version the caller holds.
    const harness = memoryManager();
    const handler = apiHandler(harness);
    await handler(anApiEvent('PUT', '/api/workflow/greet', { body: DEFINITION }));
    const id = randomUUID();
    await handler(anApiEvent('POST', '/api/workflow/greet', { query: { id }, body: {} }));
    const read = await handler(anApiEvent('GET', `/api/job/${id}`));
    const etag = read.headers?.etag as string;

    // Act: a 25 s wait that a 29 s invocation would otherwise hold.
    let answered = false;
    const polled = handler(
      anApiEvent('GET', `/api/job/${id}`, { query: { wait: '25' }, headers: { 'if-none-match': etag } }),
      aLambdaContext(29_000),
    ).then((answer) => {
      answered = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // Assess
    expect(answered, 'answered within 3 s of a 25 s wait').toBe(true);
    expect((await polled).statusCode).toBe(304);
  });

  it('answers a second start with the same id and input 200, and sends nothing more', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = apiHandler(harness);
    await handler(anApiEvent('PUT', '/api/workflow/greet', { body: DEFINITION }));
    const id = randomUUID();
    const start = anApiEvent('POST', '/api/workflow/greet', { query: { id }, body: { who: 'world' } });

    // Act
    const first = await handler(start);
    const second = await handler(start);
    const conflicting = await handler(
      anApiEvent('POST', '/api/workflow/greet', { query: { id }, body: { who: 'someone else' } }),
    );

    // Assess
    expect([first.statusCode, second.statusCode, conflicting.statusCode]).toEqual([201, 200, 409]);
    expect(harness.bus.sent).toHaveLength(1);
  });

  it('reads a base64 body (binary media types) and answers errors as JSON', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = apiHandler(harness);

    // Act
    const put = await handler(anApiEvent('PUT', '/api/workflow/greet', { body: DEFINITION, base64: true }));
    const missing = await handler(anApiEvent('GET', `/api/job/${randomUUID()}`));
    const tooLarge = await handler(
      anApiEvent('POST', '/api/workflow/greet', { body: { pad: 'x'.repeat(2000) } }),
    );

    // Assess
    expect(put.statusCode).toBe(201);
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe('not_found');
    expect(tooLarge.statusCode).toBe(413);
  });

  it('answers a job input or signal body nested too deep 400, saying why, and stores nothing', async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createApiHandler({ ...harness, maxBodyBytes: 1024 * 1024 });
    const withSignal = `workflows:\n  - name: approve\n    steps:\n      - { name: decision, type: signal }\n`;
    await handler(anApiEvent('PUT', '/api/workflow/greet', { body: DEFINITION }));
    await handler(anApiEvent('PUT', '/api/workflow/approve', { body: withSignal }));
    const waiting = JSON.parse((await handler(anApiEvent('POST', '/api/workflow/approve'))).body).id;
    const deep = `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const id = randomUUID();

    // Act
    const input = await handler(anApiEvent('POST', '/api/workflow/greet', { query: { id }, body: deep }));
    const signal = await handler(
      anApiEvent('POST', `/api/job/${waiting}/signal/decision`, {
        body: `{"ok": ${'{"a":'.repeat(64)}1${'}'.repeat(64)}}`,
      }),
    );

    // Assess
    const why = 'body is nested more than 64 levels deep (objects and lists)';
    expect([input.statusCode, signal.statusCode]).toEqual([400, 400]);
    expect(JSON.parse(input.body).error).toEqual({ code: 'bad_request', message: `the job input: ${why}` });
    expect(JSON.parse(signal.body).error).toEqual({
      code: 'bad_request',
      message: `the signal body: ${why}`,
    });
    expect((await handler(anApiEvent('GET', `/api/job/${id}`))).statusCode).toBe(404);
    expect(await harness.store.getJob(id)).toBeUndefined();
    expect(harness.bus.sent).toEqual([]);
    expect((await harness.store.getJob(waiting))?.status).toBe('running');
  });

  it('serves the dashboard page it was given', async () => {
    // Prepare
    const dashboard = new Map([
      ['/', { contentType: 'text/html; charset=utf-8', body: '<h1>Switchyard</h1>' }],
    ]);
    const handler = apiHandler(memoryManager(), dashboard);

    // Act
    const page = await handler(anApiEvent('GET', '/'));

    // Assess
    expect(page.statusCode).toBe(200);
    expect(page.body).toBe('<h1>Switchyard</h1>');
    expect(page.headers?.['content-type']).toBe('text/html; charset=utf-8');
  });

  it('answers GET /api/events 501, naming EventBridge and ?wait= (API Gateway and Lambda cannot stream)', async () => {
    // Prepare
    const handler = apiHandler(memoryManager());

    // Act
    const response = await handler(anApiEvent('GET', '/api/events'));

    // Assess
    expect(response.statusCode).toBe(501);
    expect(response.body).toContain('EventBridge');
    expect(response.body).toContain('?wait=');
  });

  it('acts as the scoped token a request carries beside the API key, and as the root without one', async () => {
    // Prepare: the root (API key alone) registers a workflow in team-a and makes a read token of it.
    const harness = memoryManager();
    const handler = apiHandler(harness);
    await handler(anApiEvent('PUT', '/api/ns/team-a/workflow/greet', { body: DEFINITION }));
    const created = await handler(
      anApiEvent('POST', '/api/tokens', { body: { namespace: 'team-a', role: 'read' } }),
    );
    const { secret } = JSON.parse(created.body) as { secret: string };
    const asToken = { authorization: `Bearer ${secret}` };

    // Act
    const read = await handler(anApiEvent('GET', '/api/ns/team-a/workflows', { headers: asToken }));
    const start = await handler(
      anApiEvent('POST', '/api/ns/team-a/workflow/greet', { headers: asToken, body: {} }),
    );
    const other = await handler(anApiEvent('GET', '/api/workflows', { headers: asToken }));
    const cognito = await handler(
      anApiEvent('POST', '/api/ns/team-a/workflow/greet', {
        headers: { authorization: 'Bearer eyJraWQiOi' },
        body: {},
      }),
    );
    const unknown = await handler(
      anApiEvent('GET', '/api/ns/team-a/workflows', { headers: { authorization: 'Bearer swy_unknown' } }),
    );

    // Assess
    expect(created.statusCode).toBe(201);
    expect([read.statusCode, start.statusCode, other.statusCode]).toEqual([200, 403, 404]);
    // A bearer that is no scoped secret is the gateway's credential (a Cognito token): the root.
    expect(cognito.statusCode).toBe(201);
    expect(unknown.statusCode).toBe(401);
  });
});

describe('Handler: api behind the Lambda authorizer (-c auth=token)', () => {
  const asPrincipal = (authorizer: Record<string, string> | null) => (event: APIGatewayProxyEvent) => {
    event.requestContext.authorizer = authorizer;
    return event;
  };

  it('acts as the principal of the authorizer context, and still enforces namespaces and roles', async () => {
    // Prepare: the root registers greet in team-a and team-b, and starts a team-b job.
    const harness = memoryManager();
    const handler = createApiHandler({ ...harness, maxBodyBytes: 1024, authorizer: true });
    const root = asPrincipal({ namespace: '*', role: 'admin', principalId: 'root' });
    for (const team of ['team-a', 'team-b'])
      await handler(root(anApiEvent('PUT', `/api/ns/${team}/workflow/greet`, { body: DEFINITION })));
    const teamBJob = randomUUID();
    await handler(
      root(anApiEvent('POST', '/api/ns/team-b/workflow/greet', { query: { id: teamBJob }, body: {} })),
    );
    // What API Gateway passes: the context, its principalId, and the header the authorizer checked.
    const runner = asPrincipal({
      tokenId: '0123456789abcdef',
      namespace: 'team-a',
      role: 'run',
      principalId: 'x',
    });
    const reader = asPrincipal({ tokenId: 'fedcba9876543210', namespace: 'team-a', role: 'read' });
    const checked = { headers: { authorization: 'Bearer swy_not-looked-up-again' } };

    // Act
    const started = await handler(
      runner(anApiEvent('POST', '/api/ns/team-a/workflow/greet', { ...checked, body: {} })),
    );
    const otherTeam = await handler(runner(anApiEvent('GET', `/api/ns/team-b/job/${teamBJob}`, checked)));
    const cancelOtherTeam = await handler(
      runner(anApiEvent('DELETE', `/api/ns/team-b/job/${teamBJob}`, checked)),
    );
    const register = await handler(
      runner(anApiEvent('PUT', '/api/ns/team-a/workflow/other', { ...checked, body: DEFINITION })),
    );
    const readOnly = await handler(
      reader(anApiEvent('POST', '/api/ns/team-a/workflow/greet', { ...checked, body: {} })),
    );
    const noContext = await handler(asPrincipal(null)(anApiEvent('GET', '/api/ns/team-a/workflows')));
    const badContext = await handler(
      asPrincipal({ namespace: 'team-a', role: 'owner' })(anApiEvent('GET', '/api/ns/team-a/workflows')),
    );
    const openPage = await handler(asPrincipal(null)(anApiEvent('GET', '/openapi.json')));

    // Assess
    expect(started.statusCode).toBe(201);
    expect(harness.bus.sent).toHaveLength(2);
    expect([otherTeam.statusCode, cancelOtherTeam.statusCode]).toEqual([404, 404]);
    expect([register.statusCode, readOnly.statusCode]).toEqual([403, 403]);
    expect(JSON.parse(readOnly.body).error.message).toMatch(/needs the role "run"; this token has "read"/);
    expect([noContext.statusCode, badContext.statusCode]).toEqual([401, 401]);
    expect(openPage.statusCode).toBe(200);
  });
});

describe('Handler: api behind an HTTP API (-c api=http): payload format 1.0', () => {
  /**
   * What an HTTP API sends in payload format 1.0 (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html):
   * the REST API's fields, `version: "1.0"`, the `$default` stage (no stage in `path`); its 2.0 events
   * put a Lambda authorizer's context under `authorizer.lambda`, the REST API's at `authorizer` itself.
   */
  const anHttpApiEvent = (
    method: string,
    path: string,
    authorizer: Record<string, unknown>,
    options: Parameters<typeof anApiEvent>[2] = {},
  ): APIGatewayProxyEvent => {
    const event = anApiEvent(method, path, options) as APIGatewayProxyEvent & { version: string };
    event.version = '1.0';
    event.requestContext = { ...event.requestContext, stage: '$default', authorizer };
    return event;
  };

  it("acts as the token authorizer's principal whether its context is nested under lambda or not", async () => {
    // Prepare
    const harness = memoryManager();
    const handler = createApiHandler({ ...harness, maxBodyBytes: 1024, authorizer: true });
    const root = { lambda: { namespace: '*', role: 'admin' }, claims: null, scopes: null };
    await handler(anHttpApiEvent('PUT', '/api/ns/team-a/workflow/greet', root, { body: DEFINITION }));
    const nested = { lambda: { tokenId: '0123456789abcdef', namespace: 'team-a', role: 'read' } };
    const flat = { tokenId: '0123456789abcdef', namespace: 'team-a', role: 'run', principalId: 'x' };

    // Act
    const readerStarts = await handler(
      anHttpApiEvent('POST', '/api/ns/team-a/workflow/greet', nested, { body: {} }),
    );
    const readerLists = await handler(anHttpApiEvent('GET', '/api/ns/team-a/workflows', nested));
    const runnerStarts = await handler(
      anHttpApiEvent('POST', '/api/ns/team-a/workflow/greet', flat, { body: {} }),
    );
    const otherTeam = await handler(anHttpApiEvent('GET', '/api/ns/team-b/workflows', nested));
    const noPrincipal = await handler(anHttpApiEvent('GET', '/api/ns/team-a/workflows', { lambda: null }));

    // Assess
    expect(readerStarts.statusCode).toBe(403);
    expect(JSON.parse(readerStarts.body).error.message).toMatch(/this token has "read"/);
    expect(readerLists.statusCode).toBe(200);
    expect(JSON.parse(readerLists.body)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'greet' })]),
    );
    expect(runnerStarts.statusCode).toBe(201);
    expect(otherTeam.statusCode).toBe(404);
    expect(noPrincipal.statusCode).toBe(401);
  });
});
