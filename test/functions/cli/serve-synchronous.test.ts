import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../../support/cli-process.js';
import { spawnServe } from '../../support/serve-process.js';

/** The "serving" log line of a serve's output. */
function servingLine(output: string): Record<string, unknown> {
  const line = output.split('\n').find((entry) => entry.includes('"message":"serving"'));
  if (!line) throw new Error(`no "serving" line in:\n${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

describe('switchyard serve --synchronous', { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-synchronous-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [[], 'FULL'],
    [['--synchronous', 'normal'], 'NORMAL'],
  ])('with %j runs SQLite at %s and says so when it starts serving', async (flags, level) => {
    const db = join(dir, `${level}.db`);
    const serve = await spawnServe(['--bus', 'memory', '--db', db, ...flags]);
    try {
      expect(servingLine(serve.output())).toMatchObject({ db, synchronous: level });
    } finally {
      await serve.kill('SIGTERM');
    }
  });

  it('refuses a level it does not know, with the levels it takes, and creates no database', async () => {
    const db = join(dir, 'refused.db');

    const run = await runCli(['serve', '--bus', 'memory', '--db', db, '--synchronous', 'OFF']);

    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toContain('--synchronous must be FULL or NORMAL, got "OFF"');
    expect(existsSync(db)).toBe(false);
  });
});
