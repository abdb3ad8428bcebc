import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../../functions/api/job-document.js';
import { describeRun, runCli } from '../../support/cli-process.js';
import { eventually } from '../../support/rabbitmq.js';
import { spawnServe } from '../../support/serve-process.js';

/** A fan-out to 3 children, made by an input mapping: no worker needed to reach it. */
const FAN_OUT_OF_THREE = `workflows:
  - name: three
    steps:
      - name: spread
        task: each
        input: '{"items": [1, 2, 3]}'
    tasks:
      - name: each
        itemListKey: items
        steps:
          - name: work
`;

describe('switchyard serve --max-tree-jobs', { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-max-tree-jobs-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['0', '--max-tree-jobs must be at least 1, got "0"'],
    ['ten', '--max-tree-jobs must be a whole number, got "ten"'],
  ])('refuses %s with a clear error and creates no database', async (value, message) => {
    const db = join(dir, `refused-${value}.db`);

    const run = await runCli(['serve', '--bus', 'memory', '--db', db, '--max-tree-jobs', value]);

    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toContain(message);
    expect(existsSync(db)).toBe(false);
  });

  it('gives the manager its quota: a fan-out of 3 under --max-tree-jobs 2 fails, naming it', async () => {
    // Prepare
    const config = join(dir, 'three.yaml');
    await writeFile(config, FAN_OUT_OF_THREE);
    const serve = await spawnServe([
      '--bus',
      'memory',
      '--db',
      join(dir, 'quota.db'),
      '--config',
      config,
      '--max-tree-jobs',
      '2',
    ]);
    try {
      // Act
      const started = await fetch(`${serve.url}/api/workflow/three`, { method: 'POST', body: '{}' });
      const { id } = (await started.json()) as { id: string };
      const job = await eventually('the job to fail', async () => {
        const document = (await (await fetch(`${serve.url}/api/job/${id}`)).json()) as JobDocument;
        return document.status === 'running' ? undefined : document;
      });

      // Assess
      expect(started.status, serve.output()).toBe(201);
      expect(job.status).toBe('failed');
      expect(job.error?.message).toBe(
        `the tree of job ${id} would hold 3 jobs under its root (3 more), over its quota of 2 (a setting of the manager: serve --max-tree-jobs, deployed MAX_TREE_JOBS)`,
      );
    } finally {
      await serve.kill('SIGTERM');
    }
  });
});
