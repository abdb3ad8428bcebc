import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildWorker } from '../../scripts/build-worker.js';
import { environmentOutsideNpm } from './run-command.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

/**
 * The worker SDK as `npm run pack:worker` packs it, built in `into` (a copy of packages/worker no
 * other build touches): the path of its switchyard-worker-<version>.tgz.
 */
export async function packWorkerSdk(into: string): Promise<string> {
  const copy = join(into, 'switchyard-worker');
  await buildWorker(copy);
  const { stdout } = await run('npm', ['pack', copy, '--pack-destination', into, '--json'], {
    env: environmentOutsideNpm(),
    timeout: 120_000,
  });
  return join(into, (JSON.parse(stdout) as { filename: string }[])[0]?.filename as string);
}

/** `name@version` of a package as this repository's node_modules hold it: npm's cache has it. */
export async function lockedVersion(name: string): Promise<string> {
  const { version } = JSON.parse(
    await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
  ) as {
    version: string;
  };
  return `${name}@${version}`;
}

/**
 * A fresh project as a user makes it (`npm init -y`: CommonJS; `type: 'module'` as `npm pkg set
 * type=module` makes it) with `packages` installed: the SDK's tarball and what else it names.
 */
export async function userProject(
  dir: string,
  packages: string[],
  type: 'commonjs' | 'module' = 'commonjs',
): Promise<void> {
  const npm = (...args: string[]) =>
    run('npm', args, { cwd: dir, env: environmentOutsideNpm(), timeout: 300_000 });
  await mkdir(dir, { recursive: true });
  await npm('init', '-y');
  if (type === 'module') await npm('pkg', 'set', 'type=module');
  // npm's cache holds what this repository's npm ci installed: no need to ask the registry again.
  await npm('install', '--prefer-offline', '--no-audit', '--no-fund', ...packages);
}
