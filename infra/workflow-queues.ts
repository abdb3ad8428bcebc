import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  compileWorkflow,
  DEFAULT_NAMESPACE,
  definitionInNamespace,
  formatDefinitionError,
  loadWorkflows,
  type WorkflowDefinition,
} from '../engine/index.js';
import type { WorkflowsSource } from './settings.js';

/** The workflows deployed with the stack: what the custom resource registers and which queues it needs. */
export interface DeployedWorkflows {
  /**
   * The definitions as the loader normalised them, in file order, with the file's `queuePrefix:`
   * written into their step queues (their names stay plain: `namespace` qualifies them when registered).
   */
  definitions: WorkflowDefinition[];
  /** The file's `namespace:`, when it names one (docs/workflows.md, "Namespaces"). */
  namespace?: string;
  /** The file's `queuePrefix:`, when it has one: registering makes it the namespace's setting. */
  queuePrefix?: string;
  /** Distinct queue names (without prefix) of every worker step of every workflow and task, sorted. */
  stepQueues: string[];
  /** The file read; undefined when the default file does not exist. */
  file?: string;
}

/**
 * Reads `-c workflows=FILE` (or the default file). A missing default means no workflows; a missing
 * explicit file, or an invalid one, stops the synth with the loader's errors.
 */
export function readDeployedWorkflows(source: WorkflowsSource): DeployedWorkflows {
  const file = resolve(source.file);
  if (!existsSync(file)) {
    if (source.explicit) throw new Error(`-c workflows=${source.file}: no such file (${file})`);
    return { definitions: [], stepQueues: [] };
  }
  const result = loadWorkflows(readFileSync(file, 'utf8'), { file: source.file });
  if (result.errors.length > 0) {
    const lines = result.errors.map((error) => `  ${formatDefinitionError(error)}`);
    throw new Error(`the workflows in ${source.file} are not valid:\n${lines.join('\n')}`);
  }
  const definitions = result.workflows.map((workflow) =>
    definitionInNamespace(workflow, DEFAULT_NAMESPACE, result.queuePrefix),
  );
  const namespace = result.namespace === DEFAULT_NAMESPACE ? undefined : result.namespace;
  return {
    definitions,
    stepQueues: stepQueuesOf(definitions),
    file,
    ...(namespace ? { namespace } : {}),
    ...(result.queuePrefix ? { queuePrefix: result.queuePrefix } : {}),
  };
}

/** Signal steps get no requests and fan-out steps only start children, so only worker steps need a queue. */
export function stepQueuesOf(definitions: readonly WorkflowDefinition[]): string[] {
  const queues = new Set<string>();
  for (const definition of definitions) {
    const workflow = compileWorkflow(definition, 1);
    for (const graph of [workflow.main, ...workflow.tasks.values()]) {
      for (const step of graph.steps) {
        if (step.kind === 'worker') queues.add(step.queue);
      }
    }
  }
  return [...queues].sort();
}
