import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../../support/serve-process.js';

/** A one-step workflow `greet` whose step is `stepName`. */
const greet = (stepName: string) => `workflows:\n  - name: greet\n    steps:\n      - name: ${stepName}\n`;

interface LogLine {
  message: string;
  level?: string;
  workflow?: string;
  version?: number;
  replaced?: number;
}

function logLines(serve: ServeProcess, workflow: string): LogLine[] {
  return serve
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((entry) => entry.workflow === workflow);
}

async function call(serve: ServeProcess, method: string, path: string, body?: string) {
  const response = await fetch(`${serve.url}${path}`, { method, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The latest version of `greet`, its step names, and the versions it has. */
async function current(serve: ServeProcess) {
  const { body } = await call(serve, 'GET', '/api/workflow/greet/definition');
  return {
    version: body.version,
    steps: (body.definition as { steps: { name: string }[] }).steps.map((step) => step.name),
    versions: (body.versions as { version: number }[]).map((entry) => entry.version),
  };
}

/** The steps a new job of `greet` runs: started, then read back. */
async function stepsOfNewJob(serve: ServeProcess): Promise<string[]> {
  const started = await call(serve, 'POST', '/api/workflow/greet', '{}');
  expect(started.status).toBe(201);
  const job = await call(serve, 'GET', `/api/job/${started.body.id as string}`);
  return Object.keys(job.body.steps as Record<string, unknown>);
}

/**
 * docs/workflows.md: at start-up `serve --config` registers a file's workflow only when the file's
 * definition changed since the definition it gave at the previous start-up, so a restart does not
 * undo what was registered through the API meanwhile.
 */
describe('Restarting serve --config FILE', { timeout: 120_000 }, () => {
  let dir: string;
  let file: string;
  let db: string;
  const start = () => spawnServe(['--bus', 'memory', '--db', db, '--config', file]);
  const restart = async (serve: ServeProcess) => {
    await serve.kill('SIGTERM');
    return start();
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-config-restart-'));
    file = join(dir, 'workflows.yaml');
    db = join(dir, 'switchyard.db');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps a version PUT since, while the file is unchanged; registers the file again once it is edited', async () => {
    await writeFile(file, greet('from-file'));
    let serve = await start();
    try {
      expect(await current(serve)).toEqual({ version: 1, steps: ['from-file'], versions: [1] });
      const put = await call(serve, 'PUT', '/api/workflow/greet', greet('from-put'));
      expect(put.status).toBe(201);

      // The same file, reformatted only: the same definition.
      await writeFile(
        file,
        `# reformatted\n${greet('from-file').replace('- name: from-file', '- name: "from-file"')}`,
      );
      serve = await restart(serve);
      expect(await current(serve)).toEqual({ version: 2, steps: ['from-put'], versions: [1, 2] });
      expect(await stepsOfNewJob(serve)).toEqual(['from-put']);
      expect(logLines(serve, 'greet')).toContainEqual(
        expect.objectContaining({ message: 'workflow file unchanged since the last start', version: 2 }),
      );

      await writeFile(file, greet('edited'));
      serve = await restart(serve);
      expect(await current(serve)).toEqual({ version: 3, steps: ['edited'], versions: [1, 2, 3] });
      expect(await stepsOfNewJob(serve)).toEqual(['edited']);
      expect(logLines(serve, 'greet')).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'workflow file changed: its definition replaces a version registered through the API',
          version: 3,
          replaced: 2,
        }),
      );

      serve = await restart(serve);
      expect(await current(serve)).toEqual({ version: 3, steps: ['edited'], versions: [1, 2, 3] });

      // Edited back to what version 1 was: the file changed, so it is what new jobs run.
      await writeFile(file, greet('from-file'));
      serve = await restart(serve);
      expect(await current(serve)).toEqual({ version: 4, steps: ['from-file'], versions: [1, 2, 3, 4] });
      expect(logLines(serve, 'greet').filter((entry) => entry.level === 'warn')).toEqual([]);
    } finally {
      await serve.kill('SIGTERM');
    }
  });

  it('keeps a workflow disabled through the API disabled, while the file is unchanged', async () => {
    const other = join(dir, 'disabled.db');
    await writeFile(file, greet('a'));
    const startOther = () => spawnServe(['--bus', 'memory', '--db', other, '--config', file]);
    let serve = await startOther();
    try {
      expect((await call(serve, 'DELETE', '/api/workflow/greet')).status).toBe(200);
      await serve.kill('SIGTERM');
      serve = await startOther();
      const refused = await call(serve, 'POST', '/api/workflow/greet', '{}');
      expect(refused.status).toBe(409);
    } finally {
      await serve.kill('SIGTERM');
    }
  });
});
