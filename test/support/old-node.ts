import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { environmentOutsideNpm } from './run-command.js';

const run = promisify(execFile);

/** The Node.js major version the old-Node tests run on: one Switchyard refuses. */
const OLD_MAJOR = 20;

async function majorOf(node: string): Promise<number | undefined> {
  try {
    const { stdout } = await run(node, ['-p', 'process.versions.node.split(".")[0]'], { timeout: 30_000 });
    return Number(stdout.trim());
  } catch {
    return undefined;
  }
}

/**
 * A `node` older than Switchyard needs: the machine's own when it is one (Debian's is 20), found on
 * PATH or in /usr/bin; otherwise Node 20 from the npm registry's node-<os>-<arch>@20 package,
 * installed once into a cache folder, as scripts/node24.sh brings Node 24.
 */
export async function oldNode(): Promise<string> {
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ];
  for (const node of new Set(candidates)) {
    if (!existsSync(node)) continue;
    const major = await majorOf(node);
    if (major !== undefined && major < 22) return node;
  }
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), `switchyard/node${OLD_MAJOR}`);
  const node = join(cache, `node_modules/node-${process.platform}-${arch}/bin/node`);
  if ((await majorOf(node)) !== OLD_MAJOR) {
    await run(
      'npm',
      [
        'install',
        '--prefix',
        cache,
        '--no-save',
        '--no-audit',
        '--no-fund',
        `node-${process.platform}-${arch}@${OLD_MAJOR}`,
      ],
      { timeout: 300_000, env: environmentOutsideNpm() },
    );
  }
  return node;
}
