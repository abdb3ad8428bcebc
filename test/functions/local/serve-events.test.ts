import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServe, type TestServe } from '../../support/local-serve.js';
import { AMQP_URL, uniqueName } from '../../support/rabbitmq.js';
import { spawnServe } from '../../support/serve-process.js';

// GET /api/events over serve on the real RabbitMQ and a real SQLite file, read by a real HTTP client
// (fetch) as text/event-stream (https://html.spec.whatwg.org/multipage/server-sent-events.html).

const APPROVAL = `workflows:
  - name: approval
    steps:
      - name: approve
        type: signal
`;
const TOKEN = 'root-token-for-the-events-test';
const ROOT = { authorization: `Bearer ${TOKEN}` };

interface SseEvent {
  id?: string;
  event?: string;
  data?: Record<string, unknown>;
}

/** A stream read as it arrives: each event (comments left out) in order. */
class EventReader {
  readonly events: SseEvent[] = [];
  private buffer = '';
  ended = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    void this.read();
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let end = this.buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const event: SseEvent = {};
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) event.data = JSON.parse(line.slice(6));
          }
          if (event.event) this.events.push(event);
          end = this.buffer.indexOf('\n\n');
        }
        this.wake();
      }
    } catch {
      // aborted
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves once `done` holds of what arrived (or the stream ended). */
  until(done: (events: SseEvent[]) => boolean): Promise<SseEvent[]> {
    return new Promise((resolve) => {
      const check = () => {
        if (!done(this.events) && !this.ended) return;
        this.waiters.delete(check);
        resolve(this.events);
      };
      this.waiters.add(check);
      check();
    });
  }

  close(): void {
    this.abort.abort();
  }
}

describe('serve: GET /api/events (Server-Sent Events)', { timeout: 60_000 }, () => {
  let serve: TestServe;
  const readers: EventReader[] = [];

  const open = async (path: string, headers: Record<string, string> = ROOT) => {
    const abort = new AbortController();
    const response = await fetch(`${serve.url}${path}`, { headers, signal: abort.signal });
    const reader = new EventReader(response, abort);
    readers.push(reader);
    return reader;
  };
  const root = async (method: string, path: string, body = '{}') => {
    const response = await serve.api<Record<string, string>>(method, path, body, ROOT);
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
    return response.body;
  };
  const start = async (prefix = '/api') => (await root('POST', `${prefix}/workflow/approval`)).id as string;
  const approve = (id: string, prefix = '/api') => root('POST', `${prefix}/job/${id}/signal/approve`);

  beforeAll(async () => {
    serve = await startTestServe(APPROVAL, { token: TOKEN });
    for (const ns of ['team-a', 'team-b']) await root('PUT', `/api/ns/${ns}/workflow/approval`, APPROVAL);
  }, 60_000);

  afterAll(async () => {
    for (const reader of readers) reader.close();
    await serve?.stop();
  });

  it("streams a job's history entries in order, each with its job, a cursor and its kind", async () => {
    const stream = await open('/api/events');
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const id = await start();
    await approve(id);
    const events = await stream.until((all) =>
      all.some((e) => e.event === 'job.completed' && e.data?.jobId === id),
    );
    const mine = events.filter((event) => event.data?.jobId === id);
    expect(mine.map((event) => event.event)).toEqual([
      'job.created',
      'step.waiting',
      'step.signalled',
      'step.completed',
      'job.completed',
    ]);
    expect(mine.map((event) => event.data?.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(mine[0]?.data).toMatchObject({
      kind: 'job.created',
      jobId: id,
      workflow: 'approval',
      namespace: 'default',
    });
    expect(new Set(mine.map((event) => event.id)).size).toBe(mine.length);
  });

  it('filters by job, workflow and kinds', async () => {
    const byKind = await open('/api/events?kinds=job.completed,step.waiting');
    const other = await start();
    const id = await start();
    const byJob = await open(`/api/events?job=${id}`);
    const byWorkflow = await open('/api/events?workflow=nothing-named-so');
    await approve(id);
    await approve(other);
    await byKind.until((all) => all.filter((e) => e.event === 'job.completed').length === 2);
    await byJob.until((all) => all.some((e) => e.event === 'job.completed'));
    expect(byKind.events.every((e) => e.event === 'job.completed' || e.event === 'step.waiting')).toBe(true);
    expect(byKind.events.filter((e) => e.data?.jobId === id).map((e) => e.event)).toEqual([
      'step.waiting',
      'job.completed',
    ]);
    expect(byJob.events.every((e) => e.data?.jobId === id)).toBe(true);
    expect(byJob.events.map((e) => e.event)).toEqual(['step.signalled', 'step.completed', 'job.completed']);
    expect(byWorkflow.events).toEqual([]);
    const refused = await serve.api('GET', '/api/events?kinds=job.done', undefined, ROOT);
    expect(refused.status).toBe(400);
  });

  it("shows a namespace's token only its own namespace's events", async () => {
    const secret = async (namespace: string) =>
      (await root('POST', '/api/tokens', JSON.stringify({ namespace, role: 'read' }))).secret as string;
    const tokenA = { authorization: `Bearer ${await secret('team-a')}` };
    const ofA = await open('/api/ns/team-a/events', tokenA);
    expect(ofA.response.status).toBe(200);
    const intoB = await serve.api('GET', '/api/ns/team-b/events', undefined, tokenA);
    // Another namespace is hidden from a scoped token, as on every namespaced route.
    expect(intoB.status).toBe(404);
    const jobB = await start('/api/ns/team-b');
    await approve(jobB, '/api/ns/team-b');
    const jobA = await start('/api/ns/team-a');
    await approve(jobA, '/api/ns/team-a');
    await ofA.until((all) => all.some((e) => e.event === 'job.completed'));
    expect(ofA.events.length).toBeGreaterThan(0);
    expect(ofA.events.every((e) => e.data?.namespace === 'team-a' && e.data?.jobId === jobA)).toBe(true);
  });

  it('resumes after Last-Event-ID, and says reset for a cursor it does not hold', async () => {
    const first = await open('/api/events?kinds=job.created,job.completed');
    const id = await start();
    const [created] = await first.until((all) => all.some((e) => e.data?.jobId === id));
    const cursor = first.events.find((e) => e.data?.jobId === id)?.id as string;
    expect(created).toBeDefined();
    first.close();
    await approve(id);
    const resumed = await open('/api/events?kinds=job.created,job.completed', {
      ...ROOT,
      'last-event-id': cursor,
    });
    await resumed.until((all) => all.some((e) => e.event === 'job.completed' && e.data?.jobId === id));
    expect(resumed.events.filter((e) => e.data?.jobId === id).map((e) => e.event)).toEqual(['job.completed']);
    const stale = await open('/api/events', { ...ROOT, 'last-event-id': 'someone-else.1' });
    await stale.until((all) => all.length > 0);
    expect(stale.events[0]?.event).toBe('reset');
  });

  it('ends its streams when serve stops, and serve stops promptly', async () => {
    const stream = await open('/api/events');
    await serve.stop();
    await stream.until(() => false);
    expect(stream.ended).toBe(true);
  });
});

describe('switchyard serve (its own process): SIGTERM with an event stream open', { timeout: 60_000 }, () => {
  it('ends the stream and exits promptly', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-events-sigterm-'));
    const config = join(dir, 'workflows.yaml');
    await writeFile(config, APPROVAL);
    const serve = await spawnServe(
      ['--db', join(dir, 'switchyard.db'), '--reply-queue', uniqueName('replies'), '--config', config],
      { AMQP_URL },
    );
    try {
      const abort = new AbortController();
      const stream = new EventReader(await fetch(`${serve.url}/api/events`, { signal: abort.signal }), abort);
      expect(stream.response.status).toBe(200);
      await fetch(`${serve.url}/api/workflow/approval`, { method: 'POST', body: '{}' });
      await stream.until((all) => all.some((event) => event.event === 'step.waiting'));

      // Act
      const exited = serve.kill('SIGTERM');

      // Assess: the stream ends, and serve exits well before the test's timeout.
      const code = await Promise.race([
        exited,
        new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000)),
      ]);
      expect(code, serve.output().slice(-2000)).toBe(0);
      await stream.until(() => false);
      expect(stream.ended).toBe(true);
    } finally {
      await serve.kill('SIGKILL').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });
});
