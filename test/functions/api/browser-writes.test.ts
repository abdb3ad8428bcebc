import { describe, expect, it } from 'vitest';
import { type ApiCall, callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const BROWSER = { origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' };

async function api() {
  const world = new SimulatedWorld();
  await world.register(
    'workflows:\n  - name: one\n    steps:\n      - name: a\n      - { name: wait, type: signal, depends: [a] }\n',
  );
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
  const call = (request: ApiCall) => callApi(deps, request);
  const jobCount = async () =>
    (JSON.parse((await call({ method: 'GET', path: '/api/jobs' })).body) as { jobs: string[] }).jobs.length;
  return { call, jobCount };
}

describe('writes from a browser', () => {
  it.each([
    ['text/plain (a cross-site fetch with no preflight)', { 'content-type': 'text/plain;charset=UTF-8' }],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['a multipart form', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['no content type', {}],
  ] as [string, Record<string, string>][])(
    'are refused with 415 when the body is %s, and start nothing',
    async (_, type) => {
      const { call, jobCount } = await api();
      for (const marker of [{ origin: BROWSER.origin }, { 'sec-fetch-site': 'cross-site' }] as Record<
        string,
        string
      >[]) {
        const response = await call({
          method: 'POST',
          path: '/api/workflow/one',
          headers: { ...marker, ...type },
          body: '{"a":1}',
        });
        expect([response.status, errorOf(response).code]).toEqual([415, 'unsupported_media_type']);
        expect(errorOf(response).message).toMatch(/Content-Type: application\/json/);
      }
      expect(await jobCount()).toBe(0);
    },
  );

  it('are refused when a form posts no fields at all (an empty body of a form type)', async () => {
    const { call, jobCount } = await api();
    const response = await call({
      method: 'POST',
      path: '/api/workflow/one',
      headers: { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(await jobCount()).toBe(0);
  });

  it('pass with a JSON content type, and without a body at all (the dashboard cancels and retries so)', async () => {
    const { call, jobCount } = await api();
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/vnd.x+json']) {
      const response = await call({
        method: 'POST',
        path: '/api/workflow/one',
        headers: { ...BROWSER, 'content-type': type },
        body: '{}',
      });
      expect(response.status, type).toBe(201);
    }
    expect(await jobCount()).toBe(3);
    const id = (JSON.parse((await call({ method: 'GET', path: '/api/jobs' })).body) as { jobs: string[] })
      .jobs[0];
    const cancelled = await call({ method: 'DELETE', path: `/api/job/${id}`, headers: BROWSER });
    expect(cancelled.status).toBe(200);
    const retried = await call({ method: 'POST', path: `/api/job/${id}/retry`, headers: BROWSER });
    expect(retried.status).toBe(200);
  });
});

describe('writes from other clients (no Origin, no Sec-Fetch-Site)', () => {
  it("are read as JSON whatever their content type: curl -d's form type, Node fetch's text/plain", async () => {
    const { call, jobCount } = await api();
    const clients: Record<string, string>[] = [
      { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'curl/8.5.0' },
      { 'content-type': 'text/plain;charset=UTF-8', 'sec-fetch-mode': 'cors', 'user-agent': 'node' },
      {},
    ];
    for (const headers of clients) {
      const response = await call({ method: 'POST', path: '/api/workflow/one', headers, body: '{"a":1}' });
      expect(response.status, JSON.stringify(headers)).toBe(201);
    }
    expect(await jobCount()).toBe(3);
  });
});
