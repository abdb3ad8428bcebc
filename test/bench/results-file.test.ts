import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AwsFigures } from '../../bench/aws-cost.js';
import type { EngineFigures } from '../../bench/engine.js';
import { type BenchResults, readResults, type SectionRun, writeResults } from '../../bench/results-file.js';

/** A section with empty figures: only which run wrote it (its command) matters here. */
function section<Figures>(command: string): SectionRun & { figures: Figures } {
  return {
    measuredAt: '2026-11-25T09:42:00.000Z',
    runs: 1,
    loadAverage: { start: 0, end: 0 },
    machine: {} as SectionRun['machine'],
    command,
    figures: {} as Figures,
  };
}

describe('the benchmark results files', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-results-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('merges a run into latest.json, keeping the sections it did not measure', async () => {
    // Prepare
    await writeResults(
      {
        engine: section<EngineFigures>('full run'),
        aws: section<AwsFigures>('full run'),
      } satisfies BenchResults,
      {
        asLatest: true,
        dir,
      },
    );

    // Act
    await writeResults({ engine: section<EngineFigures>('engine only') }, { asLatest: true, dir });

    // Assess
    const latest = await readResults(join(dir, 'latest.json'));
    expect(latest.engine?.command).toBe('engine only');
    expect(latest.aws?.command).toBe('full run');
  });

  it('writes a trial run to a dated file of its own and leaves latest.json alone', async () => {
    // Prepare
    await writeResults({ engine: section<EngineFigures>('full run') }, { asLatest: true, dir });
    const before = await readFile(join(dir, 'latest.json'), 'utf8');

    // Act
    const { files } = await writeResults(
      { engine: section<EngineFigures>('trial') },
      {
        asLatest: false,
        dir,
      },
    );

    // Assess
    expect(await readFile(join(dir, 'latest.json'), 'utf8')).toBe(before);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/-trial\.json$/);
    expect((await readResults(files[0] as string)).engine?.command).toBe('trial');
    expect((await readdir(dir)).filter((name) => name.endsWith('-trial.json'))).toHaveLength(1);
  });
});
