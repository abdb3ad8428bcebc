import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles } from '../support/source-imports.js';

const ENGINE = join(import.meta.dirname, '../../engine');
/** What engine code may import besides its own files: no I/O, no clocks, no randomness. */
// CEL evaluates expressions without I/O: its functions are the language's, and we register no others.
// croner computes cron ticks from the dates it is given (no timer while paused and given no function).
// re2js matches regular expressions (CEL's matches()) in memory: no I/O, no clock.
const ALLOWED_PACKAGES = new Set(['yaml', 'node:crypto', '@marcbachmann/cel-js', 'croner', 're2js']);
const FORBIDDEN_CALLS = [
  /\bDate\.now\(/,
  /\bnew Date\(\s*\)/,
  /\bMath\.random\(/,
  /\brandomUUID\(/,
  /\brandomBytes\(/,
  /\bprocess\./,
  /\bsetTimeout\(/,
  /\bsetInterval\(/,
  /\bperformance\.now\(/,
];

describe('engine/ is pure', () => {
  const files = sourceFiles(ENGINE);

  it('has source files to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((file) => [relative(ENGINE, file), file]))(
    '%s imports nothing that does I/O',
    (_, file) => {
      const source = readFileSync(file, 'utf8');
      const outside = importsOf(source).filter(
        (specifier) => !specifier.startsWith('.') && !ALLOWED_PACKAGES.has(specifier),
      );
      expect(outside, `forbidden imports in ${file}`).toEqual([]);
      const crypto = source.match(/import\s*{([^}]*)}\s*from\s*['"]node:crypto['"]/);
      if (crypto) expect((crypto[1] as string).split(',').map((name) => name.trim())).toEqual(['createHash']);
    },
  );

  it.each(files.map((file) => [relative(ENGINE, file), file]))(
    '%s reads no clock and makes no random numbers',
    (_, file) => {
      const source = readFileSync(file, 'utf8');
      expect(FORBIDDEN_CALLS.filter((pattern) => pattern.test(source)).map(String)).toEqual([]);
    },
  );

  it('catches an I/O import (the check itself works)', () => {
    expect(importsOf("import { readFile } from 'node:fs';\nexport { x } from './x.js';")).toEqual([
      'node:fs',
      './x.js',
    ]);
  });
});
