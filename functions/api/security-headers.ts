import { createHash } from 'node:crypto';
import type { ApiResponse } from './http.js';

/** The policy of everything but the dashboard page: JSON and assets load nothing and go in no frame. */
const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

const BASE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': API_POLICY,
};

/** Every answer, locally and behind API Gateway, carries these; a route's own policy (the page's) wins. */
export function withSecurityHeaders(response: ApiResponse): ApiResponse {
  return { ...response, headers: { ...BASE_HEADERS, ...response.headers } };
}

const pagePolicies = new Map<string, string>();

/**
 * The dashboard page's policy: its own script and styles, and its inline scripts by their hashes (the
 * inline one must run before any asset is asked for, so that deployed it is asked for under the stage path).
 */
export function dashboardPolicy(html: string): string {
  let policy = pagePolicies.get(html);
  if (!policy) {
    const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
      ([, code]) =>
        `'sha256-${createHash('sha256')
          .update(code ?? '')
          .digest('base64')}'`,
    );
    policy = [
      "default-src 'none'",
      `script-src ${["'self'", ...hashes].join(' ')}`,
      "style-src 'self'",
      // The page's icon is `data:,` (none).
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; ');
    pagePolicies.clear();
    pagePolicies.set(html, policy);
  }
  return policy;
}
