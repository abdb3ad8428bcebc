import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { watch } from '../../../functions/cli/commands/jobs.js';

const ID = '3f0c9a52-8a55-4f5e-9d43-1c2f1f3a6b7e';

interface Answer {
  status: number;
  etag: string;
  job?: { status: string; stepsDone: number; result?: object };
}

/** Job documents in the API's shape, two steps, as many done as `stepsDone`. */
function documentOf(job: NonNullable<Answer['job']>) {
  return {
    uuid: ID,
    workflow: 'pipeline',
    version: 1,
    status: job.status,
    input: {},
    createdAt: '2026-11-25T10:00:00.000Z',
    updatedAt: '2026-11-25T10:00:01.000Z',
    ...(job.status === 'completed' ? { endedAt: '2026-11-25T10:00:02.000Z', result: job.result } : {}),
    steps: {
      a: { status: job.stepsDone >= 1 ? 'completed' : 'running', attempts: 1 },
      b: { status: job.stepsDone >= 2 ? 'completed' : 'waiting', attempts: job.stepsDone >= 1 ? 1 : 0 },
    },
    running: [],
    completed: [],
  };
}

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** An API that answers each GET of the job with the next scripted answer, and records the requests. */
async function scriptedApi(
  answers: Answer[],
): Promise<{ url: string; seen: IncomingHttpHeaders[]; paths: string[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  server = createServer((request, response) => {
    seen.push(request.headers);
    paths.push(request.url ?? '');
    const answer = answers.shift();
    if (!answer) {
      response.writeHead(500).end('{"error":{"code":"internal","message":"no more answers"}}');
      return;
    }
    response.writeHead(answer.status, { etag: answer.etag, 'content-type': 'application/json' });
    response.end(answer.job ? JSON.stringify(documentOf(answer.job)) : undefined);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, paths };
}

describe('Command: switchyard watch', () => {
  it('long-polls from the version it holds, keeps its copy on a 304, and ends with the result', async () => {
    // Prepare
    const api = await scriptedApi([
      { status: 200, etag: 'W/"2.0.0"', job: { status: 'running', stepsDone: 0 } },
      { status: 304, etag: 'W/"2.0.0"' },
      { status: 200, etag: 'W/"3.0.0"', job: { status: 'running', stepsDone: 1 } },
      { status: 200, etag: 'W/"4.0.0"', job: { status: 'completed', stepsDone: 2, result: { words: 42 } } },
    ]);
    const lines: string[] = [];

    // Act
    const exitCode = await watch(ID, { url: api.url }, (line) => lines.push(line));

    // Assess
    expect(exitCode).toBe(0);
    expect(api.seen.map((headers) => headers['if-none-match'])).toEqual([
      undefined,
      'W/"2.0.0"',
      'W/"2.0.0"',
      'W/"3.0.0"',
    ]);
    expect(api.paths.slice(1)).toEqual(Array(3).fill(`/api/job/${ID}?wait=20`));
    expect(
      lines.filter((line) => line.includes('steps')).map((line) => line.match(/\d\/2 steps/)?.[0]),
    ).toEqual(['0/2 steps', '1/2 steps', '2/2 steps']);
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ words: 42 });
  });
});

describe('Command: switchyard watch, on a paused job', () => {
  it('keeps watching while the job is paused, and ends with the result once it is resumed', async () => {
    const api = await scriptedApi([
      { status: 200, etag: 'W/"2.0.0"', job: { status: 'running', stepsDone: 0 } },
      { status: 200, etag: 'W/"3.0.0"', job: { status: 'paused', stepsDone: 1 } },
      { status: 304, etag: 'W/"3.0.0"' },
      { status: 200, etag: 'W/"4.0.0"', job: { status: 'running', stepsDone: 1 } },
      { status: 200, etag: 'W/"5.0.0"', job: { status: 'completed', stepsDone: 2, result: { ok: 1 } } },
    ]);
    const lines: string[] = [];
    const exitCode = await watch(ID, { url: api.url }, (line) => lines.push(line));
    expect(exitCode).toBe(0);
    expect(api.paths).toHaveLength(5);
    expect(lines.some((line) => line.endsWith('paused'))).toBe(true);
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ ok: 1 });
  });
});
