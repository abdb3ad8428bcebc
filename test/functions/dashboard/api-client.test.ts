import { describe, expect, it } from 'vitest';
import {
  ApiRequestError,
  AuthRequiredError,
  createApiClient,
} from '../../../functions/dashboard/src/api-client.js';
import type { Credential } from '../../../functions/dashboard/src/credentials.js';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

function fakeApi(answer: (sent: Sent) => Response, credential?: Credential) {
  const sent: Sent[] = [];
  const authRequests: AuthRequiredError[] = [];
  const client = createApiClient({
    credential: () => credential,
    onAuthRequired: (request) => authRequests.push(request),
    fetch: async (input, init) => {
      const request: Sent = {
        url: String(input),
        method: init?.method ?? 'GET',
        headers: (init?.headers ?? {}) as Record<string, string>,
        ...(typeof init?.body === 'string' ? { body: init.body } : {}),
      };
      sent.push(request);
      return answer(request);
    },
  });
  return { client, sent, authRequests };
}

const json = (status: number, value: unknown) =>
  new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });

describe('Function: createApiClient', () => {
  it('calls URLs relative to the page, with the credential and a JSON body', async () => {
    // Prepare
    const { client, sent } = fakeApi(() => json(200, { ok: true }), { kind: 'api-key', value: 'k1' });

    // Act
    const answer = await client.request<{ ok: boolean }>('api/job/x/signal/s', {
      method: 'POST',
      body: { approved: true },
    });

    // Assess
    expect(answer).toEqual({ ok: true });
    expect(sent).toEqual([
      {
        url: 'api/job/x/signal/s',
        method: 'POST',
        headers: { accept: 'application/json', 'x-api-key': 'k1', 'content-type': 'application/json' },
        body: '{"approved":true}',
      },
    ]);
  });

  it('refuses an absolute path: deployed, the API lives under a stage path', async () => {
    const { client, sent } = fakeApi(() => json(200, {}));
    await expect(client.request('/api/jobs')).rejects.toThrow(/relative/);
    expect(sent).toEqual([]);
  });

  it('asks for a token on a 401 from Switchyard, and says when a given one was refused', async () => {
    const refusal = () => json(401, { error: { code: 'unauthorized', message: 'needs a token' } });
    const first = fakeApi(refusal);
    const error = await first.client.request('api/workflows').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect(first.authRequests).toMatchObject([{ kind: 'token', rejected: false, message: 'needs a token' }]);

    const again = fakeApi(() => json(401, { error: { code: 'unauthorized', message: 'wrong' } }), {
      kind: 'token',
      value: 'bad',
    });
    await again.client.request('api/workflows').catch(() => {});
    expect(again.sent[0]?.headers.authorization).toBe('Bearer bad');
    expect(again.authRequests).toMatchObject([{ kind: 'token', rejected: true }]);
  });

  it("shows Switchyard's 403 to a token (a role too low) as an error, not a credential prompt", async () => {
    const { client, authRequests } = fakeApi(
      () => json(403, { error: { code: 'forbidden', message: 'needs the role "run"' } }),
      { kind: 'token', value: 'swy_reader' },
    );
    const error = (await client
      .request('api/job/x', { method: 'DELETE' })
      .catch((caught) => caught)) as ApiRequestError;
    expect(error).toBeInstanceOf(ApiRequestError);
    expect([error.status, error.message]).toEqual([403, 'needs the role "run"']);
    expect(authRequests).toEqual([]);
  });

  it("asks for an API key on API Gateway's 403", async () => {
    const { client, authRequests } = fakeApi(() =>
      json(403, { error: { code: 'INVALID_API_KEY', message: 'Forbidden' } }),
    );
    await client.request('api/workflows').catch(() => {});
    expect(authRequests).toMatchObject([{ kind: 'api-key', rejected: false }]);
  });

  it('turns any other refusal into an error with its code and message', async () => {
    const { client } = fakeApi(() =>
      json(409, { error: { code: 'conflict', message: 'the job is finished' } }),
    );
    const error = (await client
      .request('api/job/x', { method: 'DELETE' })
      .catch((caught) => caught)) as ApiRequestError;
    expect(error).toBeInstanceOf(ApiRequestError);
    expect(error).toMatchObject({ status: 409, code: 'conflict', message: 'the job is finished' });
  });

  it('sends the version held as If-None-Match, and reads a 304 as unchanged', async () => {
    const { client, sent } = fakeApi((request) =>
      request.headers['if-none-match'] === 'W/"3.0.0"'
        ? new Response(null, { status: 304, headers: { etag: 'W/"3.0.0"' } })
        : new Response('{"status":"running"}', { status: 200, headers: { etag: 'W/"3.0.0"' } }),
    );

    const first = await client.requestIfChanged<{ status: string }>('api/job/x', undefined);
    const second = await client.requestIfChanged('api/job/x?wait=20', first?.etag);

    expect(first).toEqual({ body: { status: 'running' }, etag: 'W/"3.0.0"' });
    expect(second).toBeUndefined();
    expect(sent.map((request) => request.headers['if-none-match'])).toEqual([undefined, 'W/"3.0.0"']);
  });
});
