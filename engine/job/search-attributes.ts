import type { CompiledWorkflow } from '../definition/compile.js';
import { MAX_ATTRIBUTE_VALUE_LENGTH } from '../definition/search-attributes.js';
import type { JobRecord } from './types.js';

/**
 * A new top-level job's search attributes: each of its workflow's `searchAttributes:` evaluated
 * over the job's input. A string, number or boolean value is kept as text (cut to 200 characters);
 * an attribute whose expression fails (a missing field) or gives another type is left out, and
 * never stops the job. Undefined when none gave a value.
 */
export function searchAttributesOf(
  workflow: CompiledWorkflow,
  job: Pick<JobRecord, 'id' | 'workflow' | 'version' | 'input'>,
): Record<string, string> | undefined {
  if (!workflow.searchAttributes?.length) return undefined;
  const attributes: Record<string, string> = {};
  let any = false;
  for (const { name, expression } of workflow.searchAttributes) {
    const result = expression.evaluate({
      input: job.input,
      job: { id: job.id, workflow: job.workflow, version: job.version, input: job.input },
      steps: {},
    });
    if (!result.ok) continue;
    const value = result.value.v;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    attributes[name] = String(value).slice(0, MAX_ATTRIBUTE_VALUE_LENGTH);
    any = true;
  }
  return any ? attributes : undefined;
}
