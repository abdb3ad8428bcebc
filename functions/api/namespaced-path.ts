import { DEFAULT_NAMESPACE, namespaceProblem } from '../../engine/index.js';
import { ApiError } from './http.js';

const PREFIX = '/api/ns/';

/**
 * `/api/ns/{namespace}/rest` as the namespace and `/api/rest`; any other path acts in `default`, so
 * the original's routes keep their meaning. A namespace that cannot be one is a 400.
 */
export function namespacedPath(path: string): { namespace: string; path: string; explicit: boolean } {
  if (!path.startsWith(PREFIX)) return { namespace: DEFAULT_NAMESPACE, path, explicit: false };
  const rest = path.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  const encoded = slash < 0 ? rest : rest.slice(0, slash);
  let namespace: string;
  try {
    namespace = decodeURIComponent(encoded);
  } catch {
    throw new ApiError('bad_request', `the namespace in ${path.slice(0, 200)} is not valid percent-encoding`);
  }
  const problem = namespaceProblem(namespace);
  if (problem) throw new ApiError('bad_request', problem);
  return { namespace, path: `/api${slash < 0 ? '' : rest.slice(slash)}`, explicit: true };
}
