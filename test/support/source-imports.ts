import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every `.ts` and `.tsx` file below `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts') || entry.name.endsWith('.tsx')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The module specifiers a source file imports or re-exports, statically or dynamically. */
export function importsOf(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1] as string,
  );
  const sideEffects = [...source.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1] as string,
  );
  const dynamic = [...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] as string);
  const required = [...source.matchAll(/\brequire\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] as string);
  return [...specifiers, ...sideEffects, ...dynamic, ...required];
}
