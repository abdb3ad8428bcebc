import { type Principal, ROOT } from '../../engine/index.js';
import { bearerOf, sameSecret } from './bearer.js';
import { isScopedSecret, type ScopedTokens } from './scoped-tokens.js';

export interface BearerPrincipalDeps {
  tokens: Pick<ScopedTokens, 'principalOf'>;
  /** The root secret (deployed: the stack's secret in Secrets Manager). */
  rootSecret: () => Promise<string>;
}

/**
 * Who `Authorization: Bearer <secret>` acts as: the root secret is the root (admin of `*`), a scoped
 * token's secret is its token, anything else (no bearer, unknown or revoked token) is no one.
 */
export async function principalOfBearer(
  header: string | undefined,
  deps: BearerPrincipalDeps,
): Promise<Principal | undefined> {
  const bearer = bearerOf(header);
  if (bearer === undefined) return undefined;
  if (isScopedSecret(bearer)) return deps.tokens.principalOf(bearer);
  return sameSecret(bearer, await deps.rootSecret()) ? ROOT : undefined;
}
