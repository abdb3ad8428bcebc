import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callApi, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const PAGE = `<!doctype html><html><head><script>
  (() => { document.title = 'x'; })();
</script></head><body></body></html>`;
const dashboard = new Map([
  ['/', { contentType: 'text/html; charset=utf-8', body: PAGE }],
  ['/assets/app.js', { contentType: 'text/javascript; charset=utf-8', body: 'export {};' }],
]);

describe('security headers', () => {
  const api = () => worldApi(new SimulatedWorld(), { maxBodyBytes: 1024, token: 'secret', dashboard });

  it('are on every answer: JSON, errors, the dashboard and its assets', async () => {
    const deps = api();
    const calls = [
      { method: 'GET', path: '/openapi.json' },
      { method: 'GET', path: '/api/workflows' },
      { method: 'GET', path: '/api/workflows', headers: { authorization: 'Bearer secret' } },
      { method: 'GET', path: '/nowhere' },
      { method: 'GET', path: '/assets/app.js' },
      { method: 'GET', path: '/' },
    ];
    for (const call of calls) {
      const response = await callApi(deps, call);
      expect(response.headers, `${call.method} ${call.path} -> ${response.status}`).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
      });
    }
  });

  it("give the API's answers a policy that loads nothing", async () => {
    const response = await callApi(api(), { method: 'GET', path: '/openapi.json' });
    expect(response.headers?.['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("give the dashboard page a policy that allows its own files and its inline script's hash, nothing else", async () => {
    const response = await callApi(api(), { method: 'GET', path: '/' });
    const inline = /<script>([\s\S]*?)<\/script>/.exec(PAGE)?.[1] ?? '';
    const hash = createHash('sha256').update(inline).digest('base64');
    const policy = Object.fromEntries(
      (response.headers?.['content-security-policy'] ?? '').split(';').map((part) => {
        const [name, ...values] = part.trim().split(/\s+/);
        return [name, values.join(' ')];
      }),
    );
    expect(policy).toEqual({
      'default-src': "'none'",
      'script-src': `'self' 'sha256-${hash}'`,
      'style-src': "'self'",
      'img-src': "'self' data:",
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'self'",
      'frame-ancestors': "'none'",
    });
  });
});
