import { randomBytes } from 'node:crypto';
import {
  type Principal,
  type Role,
  type StoredToken,
  type TokenStore,
  tokenHash,
  tokenIdOf,
} from '../../engine/index.js';

/** What `GET /api/tokens` shows of a token: everything but its hash. */
export interface TokenListing {
  id: string;
  namespace: string;
  role: Role;
  description: string;
  createdAt: string;
}

/** Deployed, a token found is trusted this long without reading the table again. */
export const DEPLOYED_TOKEN_CACHE_MS = 30_000;

/** Secrets carry this prefix, so that a leaked one is easy to recognise (and to scan for). */
const SECRET_PREFIX = 'swy_';

const CACHE_LIMIT = 1_000;

/** Whether a bearer credential is shaped as a scoped token's secret (and so is looked up as one). */
export function isScopedSecret(bearer: string): boolean {
  return bearer.startsWith(SECRET_PREFIX);
}

export interface ScopedTokensOptions {
  store: TokenStore;
  /**
   * How long a token found stays trusted without reading the store (0: read at every request,
   * so a revocation holds at once). A revocation through this process clears it at once; one
   * through another process (another Lambda instance) holds within this delay. @default 0
   */
  cacheMs?: number;
  /** @default Date.now */
  clock?: () => number;
}

/**
 * Scoped tokens: created with a secret answered once (only its SHA-256 is stored), listed without
 * secrets, revoked; and each request's bearer secret looked up, through a small cache of the tokens
 * found (unknown secrets are never cached: a token created elsewhere works at once).
 */
export class ScopedTokens {
  private readonly store: TokenStore;
  private readonly cacheMs: number;
  private readonly clock: () => number;
  private readonly found = new Map<string, { principal: Principal; until: number }>();

  constructor(options: ScopedTokensOptions) {
    this.store = options.store;
    this.cacheMs = options.cacheMs ?? 0;
    this.clock = options.clock ?? Date.now;
  }

  /** A new token of that scope; `secret` is answered now and never again. */
  async create(scope: {
    namespace: string;
    role: Role;
    description: string;
  }): Promise<{ token: TokenListing; secret: string }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
      const hash = tokenHash(secret);
      const stored: StoredToken = { id: tokenIdOf(hash), hash, ...scope, createdAt: this.clock() };
      if (await this.store.saveToken(stored)) return { token: listing(stored), secret };
    }
    throw new Error('three new tokens in a row had ids already taken');
  }

  async list(): Promise<TokenListing[]> {
    return (await this.store.listTokens()).map(listing);
  }

  async get(id: string): Promise<TokenListing | undefined> {
    const stored = await this.store.getToken(id);
    return stored && listing(stored);
  }

  /** @returns false when there is no such token */
  async revoke(id: string): Promise<boolean> {
    for (const [hash, entry] of this.found) if (entry.principal.tokenId === id) this.found.delete(hash);
    return this.store.deleteToken(id);
  }

  /** Who the secret acts as, or undefined when it is no token (unknown, or revoked). */
  async principalOf(secret: string): Promise<Principal | undefined> {
    const hash = tokenHash(secret);
    const now = this.clock();
    const cached = this.found.get(hash);
    if (cached && cached.until > now) return cached.principal;
    this.found.delete(hash);
    const stored = await this.store.getToken(tokenIdOf(hash));
    // The id is a prefix of the hash: the whole hash must match too.
    if (!stored || stored.hash !== hash) return undefined;
    const principal: Principal = { namespace: stored.namespace, role: stored.role, tokenId: stored.id };
    if (stored.description !== '') principal.tokenDescription = stored.description;
    if (this.cacheMs > 0) {
      if (this.found.size >= CACHE_LIMIT) this.found.clear();
      this.found.set(hash, { principal, until: now + this.cacheMs });
    }
    return principal;
  }
}

function listing(token: StoredToken): TokenListing {
  return {
    id: token.id,
    namespace: token.namespace,
    role: token.role,
    description: token.description,
    createdAt: new Date(token.createdAt).toISOString(),
  };
}
