import type { Graph, StepNode } from '../definition/compile.js';
import { isJsonObject, type JsonObject, mergeFirstWins } from '../json.js';
import type { JobRecord } from './types.js';

/**
 * A step with no `depends` receives the job input. A step with `depends` receives the merge of its
 * ancestors' outputs: for each key, the value from the first ancestor, in `depends` order, whose
 * output has that key.
 */
export function stepInput(job: JobRecord, node: StepNode, graph: Graph): JsonObject {
  if (node.depends.length === 0) return job.input;
  if (node.depends.length === 1) {
    const output = outputOf(job, graph, node.depends[0] as string);
    return isJsonObject(output) ? { ...output } : {};
  }
  return mergeFirstWins(node.depends.map((name) => outputOf(job, graph, name)));
}

/**
 * A job's result: the merge, as above, of its terminal steps' outputs in declaration order; only
 * completed ones count (a skipped step has no output, a handled failure's is its error).
 */
export function jobResult(job: JobRecord, graph: Graph): JsonObject {
  return mergeFirstWins(
    graph.terminals.map((name) => {
      const index = graph.byName.get(name)?.index;
      const state = index === undefined ? undefined : job.steps.get(index);
      return state?.status === 'completed' ? state.output : undefined;
    }),
  );
}

function outputOf(job: JobRecord, graph: Graph, name: string): JsonObject | undefined {
  const index = graph.byName.get(name)?.index;
  return index === undefined ? undefined : job.steps.get(index)?.output;
}
