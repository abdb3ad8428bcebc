import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SecretResolver } from '../../engine/index.js';

/** How long a value read is used before it is read again (a rotated secret is seen within this). */
export const SECRET_CACHE_MS = 5 * 60_000;
/** How long a secret found missing stays missing (one created meanwhile is seen within this). */
export const MISSING_SECRET_CACHE_MS = 30_000;
/** Names kept at most: a container forgets the oldest beyond this. */
const MAX_CACHED_SECRETS = 1_000;

export interface SecretsManagerSecretsOptions {
  client: SecretsManagerClient;
  /** The secret of `params` name N is the Secrets Manager secret `<prefix>N`. */
  prefix: string;
  /** @default Date.now */
  clock?: () => number;
}

interface Cached {
  value: Promise<string | undefined>;
  until: number;
}

/**
 * Deployed secrets (`params: { key: { secret: NAME } }`): the Secrets Manager secret `<prefix>NAME`,
 * its `SecretString`, read when a request naming it is sent and kept for `SECRET_CACHE_MS` per
 * container (a secret that does not exist: for `MISSING_SECRET_CACHE_MS`). Concurrent sends share one
 * read. A read that fails otherwise (throttled, denied, the service down) is not kept: the send fails
 * and is tried again, as any send the bus could not make. Errors name the secret, never its value.
 */
export function secretsManagerSecrets(options: SecretsManagerSecretsOptions): SecretResolver {
  const clock = options.clock ?? Date.now;
  const cache = new Map<string, Cached>();

  const read = async (name: string): Promise<string | undefined> => {
    try {
      const { SecretString } = await options.client.send(
        new GetSecretValueCommand({ SecretId: `${options.prefix}${name}` }),
      );
      if (SecretString === undefined)
        throw new Error(
          `secret ${options.prefix}${name} holds no text (SecretString): binary secrets are not read`,
        );
      return SecretString;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };

  const secretOf = (name: string): Promise<string | undefined> => {
    const now = clock();
    const cached = cache.get(name);
    if (cached && cached.until > now) return cached.value;
    const value = read(name);
    const entry: Cached = { value, until: Number.POSITIVE_INFINITY };
    cache.delete(name);
    cache.set(name, entry);
    if (cache.size > MAX_CACHED_SECRETS) cache.delete(cache.keys().next().value as string);
    value.then(
      (found) => {
        entry.until = clock() + (found === undefined ? MISSING_SECRET_CACHE_MS : SECRET_CACHE_MS);
      },
      () => {
        if (cache.get(name) === entry) cache.delete(name);
      },
    );
    return value;
  };

  return {
    async resolve(names) {
      const values = await Promise.all(names.map(secretOf));
      const found = new Map<string, string>();
      names.forEach((name, n) => {
        const value = values[n];
        if (value !== undefined) found.set(name, value);
      });
      return found;
    },
  };
}
