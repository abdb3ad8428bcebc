import type { InboundReply, JsonObject } from '../../engine/index.js';
import type { TokenClaim } from './request-tokens.js';

/**
 * `POST /api/callback/{token}`: what whoever holds an attempt's token may say of that attempt, as
 * its worker's reply would (protocol.md, "Callbacks").
 */
export type Callback =
  | { type: 'success'; output?: JsonObject }
  | { type: 'failure'; error?: string; retryable?: boolean }
  | { type: 'heartbeat' }
  | { type: 'suspend'; note?: string };

export const CALLBACK_TYPES = ['success', 'failure', 'heartbeat', 'suspend'] as const;

/** The reply a callback stands for: the attempt its token vouches for, the body a worker would send. */
export function callbackReply(claim: TokenClaim, token: string, callback: Callback): InboundReply {
  const base = { correlationId: claim.correlationId, attempt: claim.attempt, token };
  switch (callback.type) {
    case 'success':
      return { ...base, body: JSON.stringify(callback.output ?? {}) };
    case 'failure':
      return {
        ...base,
        type: 'error',
        body: JSON.stringify({ error: callback.error ?? 'failed (a callback said so)' }),
        ...(callback.retryable === false ? { retryable: false } : {}),
      };
    case 'heartbeat':
      return { ...base, type: 'heartbeat', body: '' };
    case 'suspend':
      return {
        ...base,
        type: 'suspend',
        body: JSON.stringify(callback.note ? { reason: callback.note } : {}),
      };
  }
}
