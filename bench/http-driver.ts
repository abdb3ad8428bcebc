import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { waitFor } from './child.js';
import { HttpLane } from './http-lane.js';
import { type MetricsReading, parseMetrics } from './metrics-window.js';

/*
 * The driver's side of the local benchmark: it talks to serve over HTTP only, as a user would, on
 * node:http with keep-alive (fetch costs several times more CPU per request, and the driver shares
 * the two cores with what it measures).
 */

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request. A kept-alive socket that serve closed meanwhile fails with ECONNRESET: retried once,
 * which is safe as every call is idempotent (job starts carry their id).
 */
async function call<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  try {
    return await callOnce<T>(method, url, body);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return callOnce<T>(method, url, body);
  }
}

function callOnce<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method,
        agent,
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: response.statusCode ?? 0, body: (text ? JSON.parse(text) : undefined) as T });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function callText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Starts `jobs` jobs of `workflow`, `concurrency` requests at a time, each lane on its own kept-alive
 * connection; returns their ids. A connection serve closed meanwhile is reopened and the start sent
 * again, which is safe as every start carries its id.
 */
export async function submitJobs(
  baseUrl: string,
  workflow: string,
  jobs: number,
  concurrency: number,
  input: (n: number) => Record<string, unknown> = () => ({}),
): Promise<string[]> {
  const ids: string[] = new Array(jobs);
  let next = 0;
  const start = async (lane: HttpLane, path: string, body: string) => {
    try {
      return { lane, response: await lane.request('POST', path, body) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
      const reopened = await HttpLane.open(baseUrl);
      return { lane: reopened, response: await reopened.request('POST', path, body) };
    }
  };
  const runLane = async () => {
    let lane = await HttpLane.open(baseUrl);
    try {
      for (;;) {
        const n = next++;
        if (n >= jobs) return;
        const id = randomUUID();
        const sent = await start(lane, `/api/workflow/${workflow}?id=${id}`, JSON.stringify(input(n)));
        lane = sent.lane;
        const { status, body } = sent.response;
        if (status !== 201 && status !== 200)
          throw new Error(`starting a ${workflow} job answered ${status}: ${body}`);
        ids[n] = (JSON.parse(body) as { id: string }).id;
      }
    } finally {
      lane.close();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs) }, runLane));
  return ids;
}

/** Waits until `workflow` has no running top-level job (GET /api/workflows), polling. */
export async function waitUntilIdle(baseUrl: string, workflow: string, timeoutMs: number): Promise<void> {
  await waitFor(
    `${workflow} to have no running job`,
    async () => {
      const { body } = await call<{ name: string; job_count: number }[]>('GET', `${baseUrl}/api/workflows`);
      const entry = body.find((w) => w.name === workflow);
      if (!entry) throw new Error(`serve does not know ${workflow}`);
      return entry.job_count === 0 ? true : undefined;
    },
    timeoutMs,
    20,
  );
}

interface JobSummary {
  uuid: string;
  status: string;
  updatedAt: string;
}

/** Every top-level job of `workflow` with `status`, through the paged listing. */
export async function listJobs(baseUrl: string, workflow: string, status: string): Promise<JobSummary[]> {
  const jobs: JobSummary[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ workflow, status, detail: '1', limit: '1000' });
    if (cursor) query.set('cursor', cursor);
    const { body } = await call<{ jobs: JobSummary[]; cursor?: string }>(
      'GET',
      `${baseUrl}/api/jobs?${query}`,
    );
    jobs.push(...body.jobs);
    cursor = body.cursor;
  } while (cursor);
  return jobs;
}

export async function getJob(
  baseUrl: string,
  id: string,
): Promise<{ status: string; endedAt?: string; updatedAt: string }> {
  const { status, body } = await call<{ status: string; endedAt?: string; updatedAt: string }>(
    'GET',
    `${baseUrl}/api/job/${id}`,
  );
  if (status !== 200) throw new Error(`GET job ${id} answered ${status}`);
  return body;
}

/** serve's /metrics, parsed for the report (see metrics-window.ts). */
export async function readMetrics(baseUrl: string): Promise<MetricsReading> {
  return parseMetrics(await callText(`${baseUrl}/metrics`));
}
