import { createHash, timingSafeEqual } from 'node:crypto';

/** The credential of `Authorization: Bearer <credential>`, or undefined when the header is not that. */
export function bearerOf(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer\s+(.+)$/i.exec(header.trim())?.[1];
}

/** Digests of equal length are compared, so the time taken does not tell the secret's length. */
export function sameSecret(given: string, secret: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(secret));
}
