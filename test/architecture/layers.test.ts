import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles } from '../support/source-imports.js';

// The layering docs/architecture.md draws, held by a test rather than by review.
const ROOT = resolve(import.meta.dirname, '../..');

/** The repository-relative paths of the project files that `file` imports. */
function localImports(file: string): string[] {
  return importsOf(readFileSync(file, 'utf8'))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(ROOT, resolve(dirname(file), specifier))
        .split(sep)
        .join('/'),
    );
}

/** For each file below `folder`, the imports that start with one of `forbidden`. */
function violations(folder: string, forbidden: (file: string) => string[]): string[] {
  return sourceFiles(join(ROOT, folder)).flatMap((file) => {
    const from = relative(ROOT, file).split(sep).join('/');
    const prefixes = forbidden(from);
    return localImports(file)
      .filter((target) => prefixes.some((prefix) => target.startsWith(prefix)))
      .map((target) => `${from} -> ${target}`);
  });
}

const adapterOf = (path: string): string | undefined => path.match(/^functions\/adapters\/([^/]+)\//)?.[1];

describe('the layers', () => {
  it('engine/ imports nothing outside itself', () => {
    expect(violations('engine', () => ['functions/', 'infra/', 'bench/', 'examples/', 'test/'])).toEqual([]);
  });

  it('code outside engine/ enters it through engine/index.ts only (tests may import one rule directly)', () => {
    const deep = ['functions', 'infra', 'bench', 'examples', 'scripts', 'bin'].flatMap((folder) =>
      violations(folder, () => ['engine/']).filter((edge) => !edge.endsWith(' -> engine/index.js')),
    );
    expect(deep).toEqual([]);
  });

  it('the manager knows the ports, not the adapters nor a broker transport', () => {
    expect(violations('functions/manager', () => ['functions/adapters/', 'functions/transport/'])).toEqual(
      [],
    );
  });

  it('API routes reach the manager only through the service (functions/api/api-service.ts)', () => {
    expect(violations('functions/api/routes', () => ['functions/manager/'])).toEqual([]);
  });

  it('Lambda handlers take the authorizer’s store from functions/aws, not from an adapter', () => {
    const authorizer = join(ROOT, 'functions/handlers/api-authorizer.ts');
    expect(localImports(authorizer).filter((target) => target.startsWith('functions/adapters/'))).toEqual([]);
  });

  it('functions/adapters/ holds one folder per adapter and no loose files', () => {
    const loose = readdirSync(join(ROOT, 'functions/adapters'), { withFileTypes: true })
      .filter((entry) => !entry.isDirectory())
      .map((entry) => entry.name);
    expect(loose).toEqual([]);
  });

  it('an adapter imports neither the worker SDK nor another adapter', () => {
    const found = violations('functions/adapters', (from) => {
      const own = adapterOf(from);
      const others = readdirSync(join(ROOT, 'functions/adapters')).filter((name) => name !== own);
      return ['functions/worker/', ...others.map((name) => `functions/adapters/${name}/`)];
    });
    expect(found).toEqual([]);
  });

  it('the worker SDK depends on the shared transport and the engine, never on the manager or its adapters', () => {
    const managerSide = ['adapters', 'manager', 'api', 'handlers', 'local', 'aws', 'cli'].map(
      (folder) => `functions/${folder}/`,
    );
    expect(violations('functions/worker', () => managerSide)).toEqual([]);
  });

  it('the shared transport depends on nothing of the manager or the SDK', () => {
    const found = violations('functions/transport', () =>
      ['adapters', 'manager', 'api', 'handlers', 'local', 'aws', 'cli', 'worker'].map(
        (folder) => `functions/${folder}/`,
      ),
    );
    expect(found).toEqual([]);
  });

  it('sees a forbidden import (the check itself works)', () => {
    const file = join(ROOT, 'functions/worker/create-worker.ts');
    expect(localImports(file).some((target) => target.startsWith('functions/transport/'))).toBe(true);
  });
});
