import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the handlers are bundled from here, with its lock file and tsconfig. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A handler entry point under `functions/handlers/`, by file name without extension. */
export function handlerEntry(name: string): string {
  return join(REPO_ROOT, 'functions', 'handlers', `${name}.ts`);
}
