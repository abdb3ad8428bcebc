import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ManagerKeys } from '../../engine/index.js';

/** The store's name of the key every manager sharing the store signs tokens with. */
export const REQUEST_TOKEN_KEY = 'request-tokens';

const VERSION = 'swt1';
/** 128 bits of HMAC-SHA256. */
const MAC_BYTES = 16;

/** What a valid token vouches for: one attempt of one step of one job. */
export interface TokenClaim {
  correlationId: string;
  attempt: number;
}

/**
 * Every request's token: `swt1.<correlation id and attempt, base64url>.<HMAC-SHA256 of them under the
 * manager's key, 128 bits>`. Anyone holding it may answer that attempt (the worker that took the
 * request, or whoever it hands the token to); nobody can make one for another attempt without the
 * key, which never leaves the store. The key is made once and shared by every manager of the store
 * (`ManagerKeys`), so a token outlives the process that sent it.
 */
export class RequestTokens {
  /**
   * A KeyObject, made once: `createHmac` prepares a Buffer key anew at every call, which cost 4 to 5
   * times the HMAC itself and about 5% of serve's CPU on diamonds (one token a request).
   */
  private key?: KeyObject;
  private loading?: Promise<void>;

  constructor(private readonly keys: ManagerKeys) {}

  /** Loads (or makes) the key: once, before the first `mint` or `verify`. */
  ready(): Promise<void> {
    this.loading ??= this.keys
      .managerKey(REQUEST_TOKEN_KEY, randomBytes(32).toString('base64url'))
      .then((key) => {
        this.key = createSecretKey(Buffer.from(key, 'base64url'));
      })
      .catch((error: unknown) => {
        this.loading = undefined;
        throw error;
      });
    return this.loading;
  }

  get isReady(): boolean {
    return this.key !== undefined;
  }

  mint(correlationId: string, attempt: number): string {
    const claim = Buffer.from(`${correlationId}\n${attempt}`).toString('base64url');
    return `${VERSION}.${claim}.${this.mac(claim).toString('base64url')}`;
  }

  /**
   * The attempt a token vouches for, or undefined when it is not one of this manager's (forged,
   * cut, of another store). With `correlationId` (and `attempt`), it must vouch for that one.
   */
  verify(token: string | undefined, correlationId?: string, attempt?: number): TokenClaim | undefined {
    if (token === undefined) return undefined;
    const [version, claim, mac] = token.split('.');
    if (version !== VERSION || !claim || !mac || token.split('.').length !== 3) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(claim);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const text = Buffer.from(claim, 'base64url').toString('utf8');
    const newline = text.lastIndexOf('\n');
    const vouched: TokenClaim = {
      correlationId: text.slice(0, newline),
      attempt: Number(text.slice(newline + 1)),
    };
    if (newline < 0 || !Number.isSafeInteger(vouched.attempt)) return undefined;
    if (correlationId !== undefined && vouched.correlationId !== correlationId) return undefined;
    if (attempt !== undefined && vouched.attempt !== attempt) return undefined;
    return vouched;
  }

  private mac(claim: string): Buffer {
    if (!this.key) throw new Error('request tokens: the key is not loaded yet (call ready() first)');
    return createHmac('sha256', this.key).update(claim).digest().subarray(0, MAC_BYTES);
  }
}
