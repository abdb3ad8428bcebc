import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '../../../bin/switchyard.js');

/**
 * bin/switchyard.js in a folder of its own, beside a stand-in bundle that says it ran and one
 * source it was built from; `sourceAge` sets whether that source is older or newer than the bundle.
 */
async function layout(dir: string, sourceAge: 'older' | 'newer'): Promise<string> {
  await mkdir(join(dir, 'bin'));
  await mkdir(join(dir, 'dist/cli'), { recursive: true });
  await mkdir(join(dir, 'functions'));
  await writeFile(join(dir, 'package.json'), '{"type":"module"}');
  await copyFile(BIN, join(dir, 'bin/switchyard.js'));
  // The Node check it runs first.
  await copyFile(join(BIN, '../require-node.js'), join(dir, 'bin/require-node.js'));
  await writeFile(join(dir, 'dist/cli/switchyard.js'), "process.stdout.write('the bundle ran\\n');\n");
  await writeFile(join(dir, 'dist/cli/inputs.json'), '{"inputs":["functions/main.ts"]}');
  await writeFile(join(dir, 'functions/main.ts'), 'export {};\n');
  const builtAt = new Date(Date.now() - 60_000);
  await utimes(join(dir, 'dist/cli/switchyard.js'), builtAt, builtAt);
  const sourceAt = new Date(builtAt.getTime() + (sourceAge === 'older' ? -60_000 : 30_000));
  await utimes(join(dir, 'functions/main.ts'), sourceAt, sourceAt);
  return join(dir, 'bin/switchyard.js');
}

function run(bin: string, fromSource: string) {
  return spawnSync(process.execPath, [bin, 'version'], {
    encoding: 'utf8',
    env: { ...process.env, SWITCHYARD_FROM_SOURCE: fromSource },
    timeout: 30_000,
  });
}

describe('bin/switchyard.js with SWITCHYARD_FROM_SOURCE=0 (the benchmarks run serve so)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-bin-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the bundle while it is newer than its sources', async () => {
    const result = run(await layout(dir, 'older'), '0');
    expect(result.stdout).toBe('the bundle ran\n');
    expect(result.status).toBe(0);
  });

  it('fails, saying why, instead of running sources edited since the bundle was built', async () => {
    const result = run(await layout(dir, 'newer'), '0');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('older than its sources: run npm run build:cli');
  });
});
