import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesChangedSince, uncommittedFiles } from '../../bench/source-tree.js';

describe('what code a benchmark run measured', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo });

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), 'switchyard-tree-'));
    git('init', '-q');
    await mkdir(join(repo, 'functions'));
    await writeFile(join(repo, 'functions/manager.ts'), 'export {};\n');
    await writeFile(join(repo, 'README.md'), '# r\n');
    await writeFile(join(repo, '.gitignore'), 'dist/\n');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
  });

  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  it('lists the files that differ from the commit, leaving out prose and the results', async () => {
    expect(uncommittedFiles(repo)).toEqual([]);

    await writeFile(join(repo, 'functions/manager.ts'), 'export const changed = 1;\n');
    await writeFile(join(repo, 'functions/new.ts'), 'export {};\n');
    await writeFile(join(repo, 'README.md'), '# edited\n');
    await mkdir(join(repo, 'bench/results'), { recursive: true });
    await writeFile(join(repo, 'bench/results/latest.json'), '{}');
    await mkdir(join(repo, 'dist'));
    await writeFile(join(repo, 'dist/bundle.js'), '');

    expect(uncommittedFiles(repo).sort()).toEqual(['functions/manager.ts', 'functions/new.ts']);
  });

  it('names a renamed file once, by its new path', async () => {
    git('mv', 'functions/manager.ts', 'functions/moved.ts');
    expect(uncommittedFiles(repo)).toEqual(['functions/moved.ts']);
  });

  it('finds the files written or deleted after a moment, tracked or not', async () => {
    const past = new Date(Date.now() - 60_000);
    for (const file of ['functions/manager.ts', 'README.md', '.gitignore'])
      await utimes(join(repo, file), past, past);
    const startedAt = Date.now() - 30_000;
    expect(filesChangedSince(startedAt, repo)).toEqual([]);

    await writeFile(join(repo, 'functions/untracked.ts'), 'export {};\n');
    await writeFile(join(repo, 'README.md'), '# prose does not count\n');
    expect(filesChangedSince(startedAt, repo)).toEqual(['functions/untracked.ts']);

    await rename(join(repo, '.gitignore'), join(repo, 'gitignore.old'));
    await utimes(join(repo, 'gitignore.old'), past, past);
    expect(filesChangedSince(startedAt, repo).sort()).toEqual(['.gitignore', 'functions/untracked.ts']);
  });
});
