import { readFileSync } from 'node:fs';
import type { SecretResolver } from '../../engine/index.js';

/**
 * serve's secrets (`params: { key: { secret: NAME } }`): from a JSON file of names to values
 * (`--secrets-file`, read once at start) and from the environment (`--secrets-env-prefix P`: the
 * variable `P` + the name in capitals with every other character than a letter or digit as `_`, so
 * `payments/api-key` is `P` + `PAYMENTS_API_KEY`). The file wins over the environment.
 */
export function localSecrets(options: { file?: string; envPrefix?: string }): SecretResolver | undefined {
  if (options.file === undefined && options.envPrefix === undefined) return undefined;
  const fromFile = options.file === undefined ? new Map<string, string>() : readSecretsFile(options.file);
  const prefix = options.envPrefix;
  return {
    async resolve(names) {
      const values = new Map<string, string>();
      for (const name of names) {
        const value =
          fromFile.get(name) ?? (prefix === undefined ? undefined : process.env[envNameOf(prefix, name)]);
        if (value !== undefined) values.set(name, value);
      }
      return values;
    },
  };
}

export function envNameOf(prefix: string, name: string): string {
  return `${prefix}${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

function readSecretsFile(file: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    // Never the file's text: it holds the secrets.
    throw new Error(`--secrets-file ${file}: not a readable JSON file (${(error as Error).name})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`--secrets-file ${file}: must be a JSON object of secret names to values`);
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string')
      throw new Error(`--secrets-file ${file}: the value of "${name}" must be text`);
    values.set(name, value);
  }
  return values;
}
