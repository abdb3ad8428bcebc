import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summariseProfile } from '../../bench/profile-summary.js';

const own = (file: string) => `file://${join(import.meta.dirname, '..', '..', file)}`;
const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/**
 * (root) → handle (ours) → commit (ours) → run (an npm package), and handle → commit → handle
 * (recursion) → parse (native); plus idle. Each sample is 1 ms.
 */
const PROFILE = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 7] },
    { id: 2, callFrame: frame('handle', own('functions/manager/manager.ts')), children: [3] },
    { id: 3, callFrame: frame('commit', own('functions/adapters/sqlite/store.ts')), children: [4, 5, 8] },
    { id: 4, callFrame: frame('run', own('node_modules/better-sqlite3/lib/methods/transaction.js')) },
    { id: 5, callFrame: frame('handle', own('functions/manager/manager.ts')), children: [6] },
    { id: 6, callFrame: frame('parse', '') },
    { id: 7, callFrame: frame('(idle)', '') },
    { id: 8, callFrame: frame('', own('functions/adapters/sqlite/store.ts')) },
  ],
  startTime: 0,
  endTime: 7_000,
  samples: [4, 4, 4, 6, 7, 2, 8],
  timeDeltas: [1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000],
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-profile-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("serve's CPU profile, summarised", () => {
  it("charges this repository's functions with what they called, once a sample however deep they recur", async () => {
    const file = join(dir, 'serve.cpuprofile');
    await writeFile(file, JSON.stringify(PROFILE));

    const summary = await summariseProfile(file, 'serve');

    expect(summary.busyMs).toBe(6);
    expect(summary.byFunctionWithCallees?.map((e) => [e.name, e.ms])).toEqual([
      ['handle functions/manager/manager.ts', 6],
      ['commit functions/adapters/sqlite/store.ts', 5],
    ]);
    // Self time stays where the samples fell.
    expect(summary.byFunction.map((e) => [e.name, e.ms])).toEqual([
      ['run npm: better-sqlite3:1', 3],
      ['parse (native)', 1],
      ['handle functions/manager/manager.ts', 1],
      ['(anonymous) functions/adapters/sqlite/store.ts', 1],
    ]);
  });
});
