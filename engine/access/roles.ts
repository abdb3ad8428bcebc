import { createHash } from 'node:crypto';
import { ANY_NAMESPACE } from '../definition/namespace.js';

/**
 * Scoped tokens (api.md, "Owners"): a token carries a namespace (or `*`, every namespace) and a
 * role. `read` reads (the GET routes); `run` also starts, cancels, retries, signals, pauses and
 * resumes jobs; `admin` also registers and disables workflows and creates and revokes tokens.
 */
export const ROLES = ['read', 'run', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who a request acts as: a scoped token, or the root (`--token`, the stack's API key or IAM). */
export interface Principal {
  /** A namespace, or `*` for every namespace. */
  namespace: string;
  role: Role;
  /** The scoped token's id; absent for the root. */
  tokenId?: string;
  /** The scoped token's description, which the history of what it did shows beside its id. */
  tokenDescription?: string;
}

export const ROOT: Principal = { namespace: ANY_NAMESPACE, role: 'admin' };

/** Whether `held` allows what `needed` allows: each role holds those before it. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/** Whether a principal sees `namespace`: another namespace is as if absent to it. */
export function seesNamespace(principal: Principal, namespace: string): boolean {
  return principal.namespace === ANY_NAMESPACE || principal.namespace === namespace;
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * Whether `principal` may create (or revoke) a token of `scope`: an admin, over a scope within its
 * own (a namespace admin grants its namespace only; `*` needs a `*` admin).
 */
export function mayGrant(principal: Principal, scope: { namespace: string }): boolean {
  return principal.role === 'admin' && seesNamespace(principal, scope.namespace);
}

/** What the store keeps of a secret: its SHA-256, in hex. The secret itself is never stored. */
export function tokenHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A token's id: the first 16 hex digits of its hash (the store looks a secret up by it). */
export function tokenIdOf(hash: string): string {
  return hash.slice(0, 16);
}
