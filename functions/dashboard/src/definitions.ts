import type { ApiClient } from './api-client.js';
import type { WorkflowDefinitionDocument } from './api-types.js';

/** A stored version never changes, so each is fetched once per page load. */
const cache = new Map<string, Promise<WorkflowDefinitionDocument>>();

export function fetchDefinition(
  client: ApiClient,
  name: string,
  version: number,
): Promise<WorkflowDefinitionDocument> {
  const key = `${name}@${version}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = client.request<WorkflowDefinitionDocument>(
      `api/workflow/${encodeURIComponent(name)}/definition?version=${version}`,
    );
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}
