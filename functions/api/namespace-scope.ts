import { DEFAULT_NAMESPACE } from '../../engine/index.js';

/** The routes that live beneath `api/ns/{namespace}/` (api.md, "Owners"); tokens, metrics and health do not. */
const NAMESPACED = /^(\/?)api\/(workflows?|jobs?|queues|schedules|audit|callback|deliveries|events)(\/|\?|$)/;

/** Whether an API path (`/api/jobs`, or page-relative `api/jobs`) is one a namespace scopes. */
export function isNamespacedApiPath(path: string): boolean {
  return NAMESPACED.test(path);
}

/**
 * An API path as `namespace` asks it: beneath `api/ns/{namespace}/` for any namespace but `default`,
 * whose routes are the original's. The CLI and the dashboard both scope their requests with it
 * (the server reads it back with namespacedPath).
 */
export function namespacedApiPath(namespace: string, path: string): string {
  const match = NAMESPACED.exec(path);
  if (namespace === DEFAULT_NAMESPACE || !match) return path;
  const lead = match[1] as string;
  return `${lead}api/ns/${encodeURIComponent(namespace)}/${path.slice(`${lead}api/`.length)}`;
}
