import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { command } from '../../functions/cli/commands/jobs.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { uniqueName } from '../support/rabbitmq.js';

const suffix = uniqueName('pause');
const q = (name: string) => `${name}-${suffix}`;
const CHILDREN = 200;
const CONCURRENCY = 10;

const WORKFLOWS = `workflows:
  - name: load
    steps:
      - name: each
        task: per-item
      - name: total
        queue: ${q('total')}
        depends: [ each ]
    tasks:
      - name: per-item
        itemListKey: items
        concurrency: ${CONCURRENCY}
        steps:
          - name: double
            queue: ${q('double')}
          - name: square
            queue: ${q('square')}
            depends: [ double ]
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Pause and resume under load (serve on RabbitMQ and SQLite, the CLI)', () => {
  let serve: TestServe;
  let workers: PlainWorkers;
  /** Requests seen per child element and step: each must be run exactly once. */
  const seen = new Map<string, number>();
  const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS);
    workers = await startPlainWorkers(
      {
        [q('double')]: (input) => {
          count(`double:${input.item}`);
          return { ...input, doubled: (input.item as number) * 2 };
        },
        [q('square')]: (input) => {
          count(`square:${input.item}`);
          return { item: (input.doubled as number) ** 2 };
        },
        [q('total')]: (input) => ({
          sum: (input.items as number[]).reduce((sum, value) => sum + value, 0),
        }),
      },
      { delayMs: 15, prefetch: 20 },
    );
  });

  afterAll(async () => {
    await workers?.stop();
    await serve?.stop();
  });

  const read = async (id: string) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
  const children = async (id: string) => {
    const { body } = await serve.api<{ children: { status: string }[] }>(
      'GET',
      `/api/job/${id}/children?step=each&limit=1000`,
    );
    return body.children;
  };

  it('holds every child while paused, then runs each exactly once and completes with the right result', async () => {
    const items = Array.from({ length: CHILDREN }, (_, i) => i);
    const started = await serve.api<{ id: string }>('POST', '/api/workflow/load', JSON.stringify({ items }));
    const id = started.body.id;
    await eventually(async () => ((await read(id)).steps.each?.childrenDone ?? 0) >= 30);

    const lines: string[] = [];
    await command('pause', id, { url: serve.url }, (line) => lines.push(line));
    expect(lines.join('\n')).toContain('paused');

    // The in-flight replies are stored, then nothing moves: no request goes out while paused.
    // Settled: no child runs any more (a state, not a quiet moment a busy machine can fake) and
    // the workers saw nothing new over the last look.
    let before = -1;
    await eventually(async () => {
      const now = [...seen.values()].reduce((sum, n) => sum + n, 0);
      const settled = now === before && (await children(id)).every((child) => child.status !== 'running');
      before = now;
      await sleep(300);
      return settled;
    });
    await sleep(1_500);
    const held = [...seen.values()].reduce((sum, n) => sum + n, 0);
    expect(held).toBe(before);
    const paused = await read(id);
    expect(paused.status).toBe('paused');
    const done = paused.steps.each?.childrenDone ?? 0;
    expect(done).toBeLessThan(CHILDREN);
    const statuses = (await children(id)).map((child) => child.status);
    expect(statuses.filter((status) => status === 'running')).toEqual([]);
    expect(statuses.filter((status) => status === 'completed').length).toBe(done);
    const listed = await serve.api<{ jobs: string[] }>('GET', '/api/jobs?status=paused');
    expect(listed.body.jobs).toContain(id);

    console.info(
      `paused with ${done}/${CHILDREN} children done and ${held} requests handled; nothing moved for 1.5 s`,
    );
    await command('resume', id, { url: serve.url }, (line) => lines.push(line));
    const finished = await eventually(async () => {
      const job = await read(id);
      return job.status === 'completed' ? job : false;
    }, 60_000);
    expect(finished.result).toEqual({
      sum: items.reduce((sum, item) => sum + (item * 2) ** 2, 0),
    });
    for (const item of items) {
      expect(seen.get(`double:${item}`), `double ${item}`).toBe(1);
      expect(seen.get(`square:${item}`), `square ${item}`).toBe(1);
    }
    expect((await children(id)).every((child) => child.status === 'completed')).toBe(true);
  }, 90_000);
});
