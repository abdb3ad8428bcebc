import type { ParameterSpec } from '../router.js';
import { JobId, NamespaceName, WorkflowName } from './parameters.js';

/** `/api/ns/{namespace}/…`: the namespace a namespaced route acts in. */
export const namespaceParameter = {
  schema: NamespaceName,
  description: 'The namespace the route acts in (without `/api/ns/{namespace}`: `default`).',
} as const satisfies ParameterSpec;

/** `{name}`: a workflow by its plain name in the request's namespace. */
export const workflowNameParameter = {
  schema: WorkflowName,
  description: 'The workflow, by its name in the namespace.',
} as const satisfies ParameterSpec;

/** `{id}`: a job. */
export function jobIdParameter(description: string) {
  return { schema: JobId, description } as const satisfies ParameterSpec;
}
