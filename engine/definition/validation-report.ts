import type { Path } from './parse-source.js';

/** Where in a definition a problem is: the workflow, task and step it concerns. */
export interface Scope {
  workflow?: string;
  task?: string;
  step?: string;
}

/** Records a problem of the definition at `path` (`onKey`: at the key rather than its value). */
export type Report = (path: Path, scope: Scope, message: string, onKey?: boolean) => void;

/** The scope without its absent keys, as an error carries it. */
export function definedOnly(scope: Scope): Scope {
  const result: Scope = {};
  if (scope.workflow !== undefined) result.workflow = scope.workflow;
  if (scope.task !== undefined) result.task = scope.task;
  if (scope.step !== undefined) result.step = scope.step;
  return result;
}
