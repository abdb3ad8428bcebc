import { createHmac } from 'node:crypto';

/**
 * `Switchyard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (Stripe's scheme):
 * the receiver recomputes it with the shared secret over the raw body, and refuses a `t` too far
 * from its own clock, so that a captured delivery cannot be replayed later (docs/notifications.md).
 */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}
