import { DEFAULT_NAMESPACE } from '../../engine/index.js';
import { ApiError } from './http.js';
import { checkValue } from './request-checks.js';
import { namespaceParameter } from './schemas/shared-parameters.js';

const PREFIX = '/api/ns/';

/**
 * `/api/ns/{namespace}/rest` as the namespace and `/api/rest`; any other path acts in `default`, so
 * the original's routes keep their meaning. A namespace that cannot be one, once percent-decoded,
 * is a 400 (its rule is namespaceParameter's).
 */
export function namespacedPath(path: string): { namespace: string; path: string; explicit: boolean } {
  if (!path.startsWith(PREFIX)) return { namespace: DEFAULT_NAMESPACE, path, explicit: false };
  const rest = path.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  const encoded = slash < 0 ? rest : rest.slice(0, slash);
  let decoded: string;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    throw new ApiError('bad_request', `the namespace in ${path.slice(0, 200)} is not valid percent-encoding`);
  }
  const namespace = checkValue(namespaceParameter, decoded, 'path parameter "namespace"') as string;
  return { namespace, path: `/api${slash < 0 ? '' : rest.slice(slash)}`, explicit: true };
}
