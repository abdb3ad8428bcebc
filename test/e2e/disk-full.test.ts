import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteQueues, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const suffix = uniqueName('disk-full');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: held
    steps:
      - name: never
        queue: ${q('never')}
`;

/** The fields of the answers this test reads: an error, /healthz, a start, a workflow's jobs. */
interface Answer {
  error?: { code: string; message: string };
  store?: string;
  id?: string;
  running?: string[];
}

/** Writes a file until the file system refuses it: the disk is then really full. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [64 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe('serve on a full disk (a real 2 MB tmpfs)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-disk-full-'));
  const disk = join(dir, 'disk');
  let mounted = false;
  let serve: ServeProcess | undefined;

  beforeAll(() => {
    mkdirSync(disk);
    // No skipping: a run that cannot mount has not tested a full disk, and must say so.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk]);
    mounted = true;
    writeFileSync(join(dir, 'workflows.yaml'), WORKFLOWS);
  });

  afterAll(async () => {
    try {
      await serve?.kill('SIGKILL');
      await deleteQueues([q('never'), q('replies')]);
    } finally {
      if (mounted) execFileSync('umount', [disk]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a start 503 naming the cause, turns /healthz 503, keeps no half job, and recovers once space is freed', async () => {
    // Prepare
    serve = await spawnServe([
      '--config',
      join(dir, 'workflows.yaml'),
      '--db',
      join(disk, 'switchyard.db'),
      '--reply-queue',
      q('replies'),
    ]);
    const call = async (method: string, path: string, body?: string) => {
      const response = await fetch(`${serve?.url}${path}`, { method, body });
      return { status: response.status, headers: response.headers, body: (await response.json()) as Answer };
    };
    const input = JSON.stringify({ padding: 'x'.repeat(60_000) });
    const before = await call('POST', '/api/workflow/held', input);
    expect(before.status).toBe(201);
    const filler = join(disk, 'filler');
    fillDisk(filler);

    // Act
    const refused = await call('POST', '/api/workflow/held', input);
    const sick = await call('GET', '/healthz');
    const jobsWhileFull = await call('GET', '/api/workflow/held');
    rmSync(filler);
    const healed = await call('GET', '/healthz');
    const after = await call('POST', '/api/workflow/held', input);

    // Assess
    expect(refused.status, serve.output()).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body.error?.code).toBe('store_unavailable');
    expect(refused.body.error?.message).toMatch(/database or disk is full/);
    expect(sick.status).toBe(503);
    expect(sick.body.store).toMatch(/database or disk is full/);
    expect(jobsWhileFull.body.running).toEqual([before.body.id]);
    expect(healed.status, JSON.stringify(healed.body)).toBe(200);
    expect(after.status).toBe(201);
  });
});
