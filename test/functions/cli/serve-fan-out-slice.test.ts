import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../../support/cli-process.js';

describe('switchyard serve --fan-out-slice', { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-fan-out-slice-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['0', '--fan-out-slice must be at least 1, got "0"'],
    ['ten', '--fan-out-slice must be a whole number, got "ten"'],
  ])('refuses %s with a clear error and creates no database', async (value, message) => {
    const db = join(dir, `refused-${value}.db`);

    const run = await runCli(['serve', '--bus', 'memory', '--db', db, '--fan-out-slice', value]);

    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toContain(message);
    expect(existsSync(db)).toBe(false);
  });
});
