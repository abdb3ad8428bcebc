import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../../support/cli-process.js';
import { CORPUS, CORPUS_DIR, hugeDefinition, PARSER_ATTACKS } from '../../support/definition-corpus.js';

/** An uncaught exception prints a stack trace (`    at …`) or the CLI's exit code 2. */
const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;

describe('switchyard validate on the corpus of broken definitions (the CLI as a child process)', {
  timeout: 60_000,
}, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-corpus-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a signal schema that is not a JSON Schema (as registration would), naming the step', async () => {
    const file = join(dir, 'bad-signal-schema.yaml');
    await writeFile(
      file,
      'workflows:\n  - name: approval\n    steps:\n      - name: approve\n        type: signal\n        signal:\n          schema: { type: objekt }\n',
    );
    const run = await runCli(['validate', file]);
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain(
      `${file}: workflow "approval": step "approve": "signal.schema" is not a JSON Schema: schema is invalid`,
    );
  });

  it('refuses every file with its own clear errors, one per line, and exits 1', async () => {
    // Prepare
    const files = Object.keys(CORPUS).map((file) => join(CORPUS_DIR, file));

    // Act
    const run = await runCli(['validate', ...files]);

    // Assess
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(STACK_LINE);
    const lines = run.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line.startsWith(CORPUS_DIR), line).toBe(true);
    for (const [file, fragments] of Object.entries(CORPUS)) {
      const own = lines.filter((line) => line.startsWith(`${join(CORPUS_DIR, file)}:`));
      expect(own.length, `${file} has no error line`).toBeGreaterThan(0);
      for (const fragment of fragments)
        expect(
          own.some((line) => line.includes(fragment)),
          `${file}: "${fragment}" in\n${own.join('\n')}`,
        ).toBe(true);
    }
  });

  it('refuses a definition over the 1 MiB limit without parsing it', async () => {
    const file = join(dir, 'huge.yaml');
    await writeFile(file, hugeDefinition());
    const run = await runCli(['validate', file]);
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain(`${file}: the definition is larger than 1048576 bytes`);
  });

  it('survives deeply nested lists, twice in one process, with a clear error', async () => {
    // The same 6 KB file twice: the first parse overflows the stack inside the YAML parser.
    const file = join(CORPUS_DIR, PARSER_ATTACKS.deepNesting);
    const run = await runCli(['validate', file, file], 20_000);
    expect({ code: run.code, signal: run.signal, timedOut: run.timedOut }, describeRun(run)).toEqual({
      code: 1,
      signal: null,
      timedOut: false,
    });
    expect(run.stdout.split('\n').filter((line) => line.startsWith(`${file}:`))).toHaveLength(2);
  });

  // An expanded bomb would run out of memory or time: the run's own timeout is the hang guard, and
  // the error must say it was refused for its aliases (a wall-clock bound here failed under load).
  it('refuses a YAML alias bomb before expanding it, with a clear error', async () => {
    const file = join(CORPUS_DIR, PARSER_ATTACKS.aliasBomb);
    const run = await runCli(['validate', file], 10_000);
    expect({ code: run.code, timedOut: run.timedOut }, describeRun(run)).toEqual({
      code: 1,
      timedOut: false,
    });
    expect(run.stdout).toContain(`${file}: not valid YAML or JSON: more than 100 aliases`);
  });
});
