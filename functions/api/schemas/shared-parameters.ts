import type { ParameterSpec } from '../router.js';
import { JobId, NamespaceName, WorkflowName, wholeNumber } from './parameters.js';

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

/** `?limit=`: a page's size, from 1 to `max`, `size` when absent. */
export function pageLimitParameter(max: number, size: number) {
  return {
    schema: wholeNumber({ min: 1, max }),
    description: `Page size (default ${size}).`,
    emptyIsAbsent: true,
  } as const satisfies ParameterSpec;
}

/** `?cursor=`: where the previous page ended, in the route's own cursor form. */
export function pageCursorParameter<Schema extends ParameterSpec['schema']>(schema: Schema) {
  return {
    schema,
    description: 'From the previous page.',
    emptyIsAbsent: true,
  } as const satisfies ParameterSpec;
}
