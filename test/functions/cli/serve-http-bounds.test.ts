import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../../support/cli-process.js';

describe('switchyard serve: the HTTP bounds flags', { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-http-bounds-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [['--max-connections', '0'], '--max-connections must be at least 1, got "0"'],
    [['--max-connections', 'many'], '--max-connections must be a whole number, got "many"'],
    [['--headers-timeout', '0s'], '--headers-timeout must be a duration such as 10s or 500ms, got "0s"'],
    [['--request-timeout', '30'], '--request-timeout must be a duration such as 10s or 500ms, got "30"'],
    [
      ['--keep-alive-timeout', 'soon'],
      '--keep-alive-timeout must be a duration such as 10s or 500ms, got "soon"',
    ],
    [
      ['--headers-timeout', '20s', '--request-timeout', '10s'],
      '--headers-timeout (20000 ms) must not be longer than --request-timeout (10000 ms)',
    ],
    // The request timeout's default is 30 s.
    [
      ['--headers-timeout', '40s'],
      '--headers-timeout (40000 ms) must not be longer than --request-timeout (30000 ms)',
    ],
    [['--health-port', 'next'], '--health-port must be a whole number, got "next"'],
  ])('refuses %j with a clear error and creates no database', async (flags, message) => {
    const db = join(dir, `refused-${flags.join('-')}.db`);

    const run = await runCli(['serve', '--bus', 'memory', '--db', db, ...flags]);

    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toContain(message);
    expect(existsSync(db)).toBe(false);
  });
});
