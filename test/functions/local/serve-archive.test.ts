import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryWorkerTransport } from '../../../functions/adapters/memory/bus.js';
import { listArchiveFiles, showArchivedJob } from '../../../functions/cli/commands/archive.js';
import { type ServeHandle, startServe } from '../../../functions/local/serve.js';
import { createJsonLogger } from '../../../functions/telemetry/json-logger.js';
import { createWorker, type Worker } from '../../../functions/worker/index.js';

const WORKFLOWS = `workflows:
  - name: batch
    steps:
      - name: list
      - name: each
        task: item
        depends: [ list ]
    tasks:
      - name: item
        itemListKey: items
        steps:
          - name: work
`;

describe('serve --retain: finished jobs are archived as JSON Lines, then deleted; switchyard archive reads them', {
  timeout: 60_000,
}, () => {
  let dir: string;
  let serve: ServeHandle;
  let workers: Worker[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-archive-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    serve = await startServe({
      configFiles: [join(dir, 'workflows.yaml')],
      db: join(dir, 'switchyard.db'),
      bus: 'memory',
      port: 0,
      // Every finished job is past retention at once; the sweep runs every 200 ms.
      retainMs: 200,
      archiveDir: join(dir, 'archive'),
      logger: createJsonLogger({ level: 'error' }),
    });
    const broker = serve.broker;
    if (!broker) throw new Error('no in-memory broker');
    const quiet = { info() {}, warn() {}, error() {} };
    workers = [
      createWorker({
        queue: 'list',
        transport: new MemoryWorkerTransport(broker),
        logger: quiet,
        handler: () => ({ items: ['a', 'b', 'c'] }),
      }),
      createWorker({
        queue: 'work',
        transport: new MemoryWorkerTransport(broker),
        logger: quiet,
        handler: (input) => ({ done: input.item ?? null }),
      }),
    ];
    await Promise.all(workers.map((worker) => worker.start()));
  });

  afterAll(async () => {
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await serve?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('archives a finished job with its children before deleting it, and reads it back by id', async () => {
    const response = await fetch(`${serve.url}/api/workflow/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ batch: 'b-1' }),
    });
    const { id } = (await response.json()) as { id: string };
    // Deleted from the store once past retention...
    await expect
      .poll(async () => (await fetch(`${serve.url}/api/job/${id}`)).status, { timeout: 20_000 })
      .toBe(404);

    // ...and in the archive: one file (of the day it was archived), the job and its three children.
    const files = await readdir(join(dir, 'archive'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^jobs-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const listed: string[] = [];
    await listArchiveFiles({ dir: join(dir, 'archive'), output: 'json' }, (line) => listed.push(line));
    expect(JSON.parse(listed.join('\n'))).toEqual([
      { name: files[0], day: expect.any(String), jobs: 1, lines: 4 },
    ]);
    const shown: string[] = [];
    expect(await showArchivedJob(id, { dir: join(dir, 'archive') }, (line) => shown.push(line))).toBe(0);
    const archived = JSON.parse(shown.join('\n')) as {
      job: { id: string; status: string; input: unknown; steps: { name: string; status: string }[] };
      children: { parent: { id: string }; status: string }[];
    };
    expect(archived.job).toMatchObject({ id, status: 'completed', input: { batch: 'b-1' } });
    expect(archived.job.steps.map((step) => step.status)).toEqual(['completed', 'completed']);
    expect(archived.children.map((child) => child.status)).toEqual(['completed', 'completed', 'completed']);

    const missing: string[] = [];
    expect(
      await showArchivedJob('0b7c2d9e-9f0a-4a51-9b7e-0c1d2e3f4a5b', { dir: join(dir, 'archive') }, (line) =>
        missing.push(line),
      ),
    ).toBe(1);
    expect(missing[0]).toMatch(/^no job 0b7c2d9e/);
  });
});
