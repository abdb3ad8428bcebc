import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient, CliError } from '../../../functions/cli/client.js';

/** Answers every request with `status` and records the URLs asked. */
function fakeFetch(status = 200, body: unknown = {}) {
  const urls: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    urls.push(url);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return urls;
}

describe('Class: ApiClient (namespaces)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.unstubAllEnvs();
  });

  it('asks the namespaced routes beneath /api/ns/{namespace}/, and the others as they are', async () => {
    // Prepare
    const urls = fakeFetch();
    const api = new ApiClient({ url: 'http://h', namespace: 'team-a' });
    // Act
    for (const path of [
      '/api/jobs?detail=1',
      '/api/job/x/retry',
      '/api/workflows',
      '/api/workflow/b',
      '/api/queues',
      '/api/schedules?ticks=3',
    ])
      await api.get(path);
    await api.get('/api/tokens');
    await api.get('/api/namespaces');
    // Assess
    expect(urls).toEqual([
      'http://h/api/ns/team-a/jobs?detail=1',
      'http://h/api/ns/team-a/job/x/retry',
      'http://h/api/ns/team-a/workflows',
      'http://h/api/ns/team-a/workflow/b',
      'http://h/api/ns/team-a/queues',
      'http://h/api/ns/team-a/schedules?ticks=3',
      'http://h/api/tokens',
      'http://h/api/namespaces',
    ]);
    expect(api.jobLink('j')).toBe('http://h/#/ns/team-a/job/j');
  });

  it('takes SWITCHYARD_NAMESPACE, keeps default unprefixed, and refuses a namespace with a slash', async () => {
    const urls = fakeFetch();
    vi.stubEnv('SWITCHYARD_NAMESPACE', 'team-b');
    await new ApiClient({ url: 'http://h' }).get('/api/jobs');
    await new ApiClient({ url: 'http://h', namespace: 'default' }).get('/api/jobs');
    expect(urls).toEqual(['http://h/api/ns/team-b/jobs', 'http://h/api/jobs']);
    expect(() => new ApiClient({ url: 'http://h', namespace: 'a/b' })).toThrow(CliError);
    expect(() => new ApiClient({ url: 'http://h', namespace: 'a/b' })).toThrow(/holds a "\/"/);
  });

  it('says which namespace it looked in when a job is not found', async () => {
    fakeFetch(404, { error: { code: 'not_found', message: 'no job x' } });
    const api = new ApiClient({ url: 'http://h', namespace: 'team-a' });
    await expect(api.get('/api/job/x')).rejects.toThrow(
      'GET /api/job/x: 404 no job x (in namespace "team-a"; --namespace or SWITCHYARD_NAMESPACE names another)',
    );
  });
});
