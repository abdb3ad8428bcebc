/**
 * The namespace the page shows lives in the fragment's first segments, `#/ns/team-a/jobs`; a fragment
 * without them (the links views make: `#/jobs`) stays in the namespace shown now. The API's
 * namespaced paths (`api/jobs`) go beneath `api/ns/{namespace}/` for any namespace but `default`.
 */
import { DEFAULT_NAMESPACE } from '../../../engine/index.js';

export { namespacedApiPath } from '../../api/namespace-scope.js';
export { DEFAULT_NAMESPACE };

const PREFIX = /^#?\/ns\/([^/?]+)(.*)$/;

/** The namespace a fragment names, and the rest of it as a fragment of its own (`#/jobs`). */
export function splitNamespace(hash: string): { namespace?: string; hash: string } {
  const match = PREFIX.exec(hash);
  if (!match) return { hash };
  let namespace: string;
  try {
    namespace = decodeURIComponent(match[1] as string);
  } catch {
    return { hash };
  }
  const rest = match[2] as string;
  return { namespace, hash: `#${rest.startsWith('/') ? rest : `/${rest}`}` };
}

/** The fragment that shows `hash` in `namespace`: unprefixed in `default`. */
export function namespacedHash(namespace: string, hash: string): string {
  const rest = hash.replace(/^#?/, '');
  if (namespace === DEFAULT_NAMESPACE) return `#${rest || '/'}`;
  return `#/ns/${encodeURIComponent(namespace)}${rest.startsWith('/') ? rest : `/${rest}`}`;
}
