import { MAX_NAMESPACE_LENGTH, NAME_PATTERN, NAME_RULE } from './names.js';
import { sentQueueOf } from './step-kind.js';
import type { StepDefinition, WorkflowDefinition } from './types.js';

/**
 * Namespaces (api.md, "Owners"). Every workflow and job belongs to one; `default` unless named.
 * A namespace is not stored apart: it qualifies the workflow's name in the registry,
 * `<namespace>/<name>`, and the `default` namespace keeps the plain name, so what was stored
 * before namespaces existed, and the original's routes, mean `default` unchanged. A workflow name
 * never holds a `/` (NAME_PATTERN), so the qualified name splits back without doubt. Jobs, counters,
 * listings and follow-ups key workflows by that qualified name and need nothing more.
 */
export const DEFAULT_NAMESPACE = 'default';

/** Every namespace, in a token's scope. */
export const ANY_NAMESPACE = '*';

/** Why `namespace` cannot name a namespace, or undefined. */
export function namespaceProblem(namespace: unknown): string | undefined {
  if (typeof namespace !== 'string' || namespace === '') {
    return `a namespace must be a non-empty string, got ${JSON.stringify(namespace) ?? 'nothing'}`;
  }
  if (namespace.includes('/')) {
    return `namespace ${JSON.stringify(namespace.slice(0, 80))} holds a "/": use a letter, then letters, digits, "_" or "-"`;
  }
  // A namespace name is spelled as a workflow name.
  if (namespace.length > MAX_NAMESPACE_LENGTH || !NAME_PATTERN.test(namespace)) {
    return `namespace ${JSON.stringify(namespace.slice(0, 80))} is not valid: use ${NAME_RULE} (at most ${MAX_NAMESPACE_LENGTH})`;
  }
  return undefined;
}

/** A name given where a workflow or namespace name must be, that is not one. */
export class InvalidNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNameError';
  }
}

/**
 * The name a workflow of `namespace` is stored under: plain in `default`, else `<namespace>/<name>`.
 * Refuses (InvalidNameError) a name or a namespace that is not one: `default` would otherwise keep
 * `team-b/billing` as it is, which is team-b's stored name.
 */
export function qualifiedName(namespace: string, name: string): string {
  if (!NAME_PATTERN.test(name)) {
    throw new InvalidNameError(
      `workflow name ${JSON.stringify(name.slice(0, 80))} is not valid: use ${NAME_RULE}`,
    );
  }
  if (namespace === DEFAULT_NAMESPACE) return name;
  const problem = namespaceProblem(namespace);
  if (problem) throw new InvalidNameError(problem);
  return `${namespace}/${name}`;
}

/** A stored (qualified) workflow name back into its namespace and plain name. */
export function splitQualifiedName(qualified: string): { namespace: string; name: string } {
  const slash = qualified.indexOf('/');
  return slash < 0
    ? { namespace: DEFAULT_NAMESPACE, name: qualified }
    : { namespace: qualified.slice(0, slash), name: qualified.slice(slash + 1) };
}

export function namespaceOf(qualified: string): string {
  return splitQualifiedName(qualified).namespace;
}

/** Whether the workflow stored as `qualified` belongs to `namespace`. */
export function inNamespace(qualified: string, namespace: string): boolean {
  return namespaceOf(qualified) === namespace;
}

/**
 * A workflow named inside another (a `workflow:` step, `onFailure`) is a plain name: it means the
 * workflow of that name in the caller's own namespace. A namespace cannot call into another.
 */
export function resolveInCallerNamespace(callerQualified: string, target: string): string {
  return qualifiedName(namespaceOf(callerQualified), target);
}

/**
 * A definition as registered in `namespace`: its name qualified, and, with a queue prefix, each step
 * that sends to a queue given the prefixed queue explicitly (`withQueuePrefix`), so that two
 * namespaces using the same names keep their queues apart. Calls and `onFailure` stay plain names:
 * they resolve in the caller's namespace when the job runs.
 */
export function definitionInNamespace(
  definition: WorkflowDefinition,
  namespace: string,
  queuePrefix?: string,
): WorkflowDefinition {
  return withQueuePrefix({ ...definition, name: qualifiedName(namespace, definition.name) }, queuePrefix);
}

/**
 * A definition as its namespace has it: each step that sends to a queue given `prefix` before it,
 * unless its queue already starts with it (a definition read back from the API and registered again
 * keeps its queues).
 */
export function withQueuePrefix(
  definition: WorkflowDefinition,
  prefix: string | undefined,
): WorkflowDefinition {
  if (!prefix) return definition;
  const prefixed = (step: StepDefinition): StepDefinition => {
    const queue = sentQueueOf(step);
    return queue === undefined || queue.startsWith(prefix) ? step : { ...step, queue: `${prefix}${queue}` };
  };
  return {
    ...definition,
    steps: definition.steps.map(prefixed),
    ...(definition.tasks
      ? { tasks: definition.tasks.map((task) => ({ ...task, steps: task.steps.map(prefixed) })) }
      : {}),
  };
}

/** A stored definition as its namespace shows it: its plain name. */
export function definitionShown(definition: WorkflowDefinition): WorkflowDefinition {
  return { ...definition, name: splitQualifiedName(definition.name).name };
}

/** The characters a queue prefix may hold: what RabbitMQ and SQS queue names both take. */
export const QUEUE_PREFIX_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Why `prefix` cannot prefix a namespace's step queues, or undefined. */
export function queuePrefixProblem(prefix: unknown): string | undefined {
  if (typeof prefix !== 'string' || !QUEUE_PREFIX_PATTERN.test(prefix)) {
    return `a queue prefix must be 1 to 64 letters, digits, "_", "-" or ".", got ${JSON.stringify(prefix) ?? 'nothing'}`;
  }
  if (prefix.startsWith('amq.'))
    return `queue prefix "${prefix}" starts with "amq.", which RabbitMQ reserves`;
  return undefined;
}
