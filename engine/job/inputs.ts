import type { Graph, StepNode } from '../definition/compile.js';
import { isJsonObject, type JsonObject, mergeFirstWins } from '../json.js';
import type { JobRecord } from './types.js';

/**
 * A step with no `depends` receives the job input. A step with `depends` receives the merge of its
 * ancestors' outputs: for each key, the value from the first ancestor, in `depends` order, whose
 * output has that key. Under `join: none_failed` a skipped dependency is transparent: it passes on
 * what it would itself have received, so an optional gate does not cut the data off.
 */
export function stepInput(job: JobRecord, node: StepNode, graph: Graph): JsonObject {
  if (node.depends.length === 0) return job.input;
  if (node.join === 'none_failed') {
    const passed = new Map<string, JsonObject>();
    return mergeFirstWins(
      node.depends.map((name) => passedOn(job, graph, name, job.input, passed) ?? outputOf(job, graph, name)),
    );
  }
  if (node.depends.length === 1) {
    const output = outputOf(job, graph, node.depends[0] as string);
    return isJsonObject(output) ? { ...output } : {};
  }
  return mergeFirstWins(node.depends.map((name) => outputOf(job, graph, name)));
}

/**
 * A job's result: the merge, as above, of its terminal steps' outputs in declaration order; only
 * completed ones count (a skipped step has no output, a handled failure's is its error). When none
 * completed (the last steps were skipped), the last completed outputs before them (what their
 * dependencies passed on): a job whose last step was skipped returns what the steps before it produced.
 */
export function jobResult(job: JobRecord, graph: Graph): JsonObject {
  const completed = graph.terminals.flatMap((name) => {
    const state = stateOf(job, graph, name);
    return state?.status === 'completed' ? [state.output] : [];
  });
  if (completed.length) return mergeFirstWins(completed);
  const passed = new Map<string, JsonObject>();
  return mergeFirstWins(graph.terminals.map((name) => passedOn(job, graph, name, {}, passed)));
}

/**
 * What a skipped step passes on: what it would have received, made of the last completed outputs
 * before it (`atStart` for a step with no dependencies). Undefined for a step that was not skipped.
 */
function passedOn(
  job: JobRecord,
  graph: Graph,
  name: string,
  atStart: JsonObject,
  memo: Map<string, JsonObject>,
): JsonObject | undefined {
  if (stateOf(job, graph, name)?.status !== 'skipped') return undefined;
  // Iteratively, deepest first: a long chain of skipped steps must not overflow the stack.
  const stack = [name];
  while (stack.length) {
    const current = stack[stack.length - 1] as string;
    if (memo.has(current)) {
      stack.pop();
      continue;
    }
    const node = graph.byName.get(current) as StepNode;
    const unresolved = node.depends.filter(
      (dependency) => !memo.has(dependency) && stateOf(job, graph, dependency)?.status === 'skipped',
    );
    if (unresolved.length) {
      stack.push(...unresolved);
      continue;
    }
    stack.pop();
    memo.set(
      current,
      node.depends.length === 0
        ? atStart
        : mergeFirstWins(
            node.depends.map((dependency) =>
              stateOf(job, graph, dependency)?.status === 'completed'
                ? outputOf(job, graph, dependency)
                : memo.get(dependency),
            ),
          ),
    );
  }
  return memo.get(name);
}

function stateOf(job: JobRecord, graph: Graph, name: string) {
  const index = graph.byName.get(name)?.index;
  return index === undefined ? undefined : job.steps.get(index);
}

function outputOf(job: JobRecord, graph: Graph, name: string): JsonObject | undefined {
  return stateOf(job, graph, name)?.output;
}
