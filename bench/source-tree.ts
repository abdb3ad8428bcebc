import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';

/*
 * What code a run measured: the commit, the files that differ from it, and any file edited while
 * the run went on (serve, the floor and the core load their code as each run starts them, so an
 * edit in the middle of a run changes what the later runs measure).
 */

const ROOT = join(import.meta.dirname, '..');

/** Files no run loads: prose (BENCHMARKS.md, which a run rewrites, among it) and the results. */
const NOT_LOADED = [/\.md$/, /^bench\/results\//];

const isNotLoaded = (path: string): boolean => NOT_LOADED.some((pattern) => pattern.test(path));

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

/** Files that differ from the commit (changed, added, deleted or untracked), but for those no run loads. */
export function uncommittedFiles(root = ROOT): string[] {
  const entries = git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all']).split('\0');
  const paths: string[] = [];
  for (let n = 0; n < entries.length; n++) {
    const entry = entries[n] as string;
    if (!entry) continue;
    paths.push(entry.slice(3));
    // A rename or copy is followed by the path it came from.
    if (entry[0] === 'R' || entry[0] === 'C') n++;
  }
  return paths.filter((path) => !isNotLoaded(path));
}

/** Tracked and untracked files written (or deleted) after `sinceMs`, but for those no run loads. */
export function filesChangedSince(sinceMs: number, root = ROOT): string[] {
  const files = git(root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'])
    .split('\0')
    .filter(Boolean);
  return [...new Set(files)].filter((path) => {
    if (isNotLoaded(path)) return false;
    try {
      return statSync(join(root, path)).mtimeMs > sinceMs;
    } catch {
      return true;
    }
  });
}
