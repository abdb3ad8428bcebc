import { DEFAULT_NAMESPACE, namespaceOf, namespaceProblem, queuePrefixProblem } from './namespace.js';
import { amqpNameProblem, MAX_VHOSTS, reservedQueueProblem } from './queue-name.js';
import { sentQueueOf } from './step-kind.js';
import type { DefinitionError, StepDefinition, WorkflowDefinition } from './types.js';

/**
 * What the operator (the root, or a token of `*` with `admin`) decides for a namespace, never the
 * namespace's own documents (workflows.md, "Namespaces"): the prefix every step queue of its
 * workflows starts with, and the vhosts they may run on.
 */
export interface NamespaceSettings {
  namespace: string;
  /** Every step queue of the namespace starts with it, and no step queue of another namespace may. */
  queuePrefix?: string;
  /**
   * The RabbitMQ vhosts its workflows may list and its jobs may run on (`?vhost=`). Unset: the
   * broker URL's own vhost only; in `default`, any (the original's single-tenant behaviour).
   */
  vhosts?: string[];
  /** When the operator last changed them (ms). */
  updatedAt: number;
}

/** What a namespace may use when the operator has set nothing for it. */
export function defaultNamespaceSettings(namespace: string): NamespaceSettings {
  return { namespace, updatedAt: 0 };
}

/**
 * Why `settings` cannot be stored beside `others` (the other namespaces' settings), or nothing: a
 * prefix that is another's, or begins or is begun by another's (`team-a.` and `team-a.b.` could not
 * tell their queues apart), and vhost names RabbitMQ would refuse.
 */
export function namespaceSettingsProblems(
  settings: Omit<NamespaceSettings, 'updatedAt'>,
  others: readonly NamespaceSettings[],
): string[] {
  const problems: string[] = [];
  const namespace = namespaceProblem(settings.namespace);
  if (namespace) problems.push(namespace);
  const prefix = settings.queuePrefix;
  if (prefix !== undefined) {
    const problem = queuePrefixProblem(prefix);
    if (problem) problems.push(problem);
    const reserved = reservedQueueProblem(prefix);
    if (reserved) problems.push(`queue prefix "${prefix}": ${reserved}`);
    for (const other of others) {
      if (other.namespace === settings.namespace || other.queuePrefix === undefined) continue;
      if (prefix.startsWith(other.queuePrefix) || other.queuePrefix.startsWith(prefix)) {
        problems.push(
          `queue prefix "${prefix}" overlaps namespace "${other.namespace}"'s "${other.queuePrefix}": ` +
            'no queue may belong to two namespaces',
        );
      }
    }
  }
  if (settings.vhosts !== undefined) {
    if (settings.vhosts.length > MAX_VHOSTS) {
      problems.push(
        `a namespace may list at most ${MAX_VHOSTS} vhosts; this lists ${settings.vhosts.length}`,
      );
    }
    for (const vhost of settings.vhosts) {
      const problem = amqpNameProblem('vhost', vhost);
      if (problem) problems.push(problem);
    }
  }
  return problems;
}

/**
 * Why a definition (its name qualified, its queues prefixed) may not be registered in its
 * namespace: a step queue that does not start with the namespace's prefix, that starts with another
 * namespace's, or that is the manager's own; a vhost the operator has not allowed the namespace.
 */
export function namespaceRuleProblems(
  definition: WorkflowDefinition,
  all: readonly NamespaceSettings[],
  replyQueue?: string,
): DefinitionError[] {
  const namespace = namespaceOf(definition.name);
  const own = all.find((settings) => settings.namespace === namespace);
  const errors: DefinitionError[] = [];
  const check = (steps: readonly StepDefinition[], task?: string) => {
    for (const step of steps) {
      const queue = sentQueueOf(step);
      if (queue === undefined) continue;
      const message = queueOwnershipProblem(queue, namespace, own, all, replyQueue);
      if (message)
        errors.push({ workflow: definition.name, ...(task ? { task } : {}), step: step.name, message });
    }
  };
  check(definition.steps);
  for (const task of definition.tasks ?? []) check(task.steps, task.name);
  for (const vhost of definition.vhosts ?? []) {
    const message = vhostProblem(namespace, own, vhost);
    if (message) errors.push({ workflow: definition.name, message });
  }
  return errors;
}

function queueOwnershipProblem(
  queue: string,
  namespace: string,
  own: NamespaceSettings | undefined,
  all: readonly NamespaceSettings[],
  replyQueue: string | undefined,
): string | undefined {
  const reserved = reservedQueueProblem(queue, replyQueue);
  if (reserved) return reserved;
  if (own?.queuePrefix !== undefined && !queue.startsWith(own.queuePrefix)) {
    return `queue "${queue}" does not start with namespace "${namespace}"'s queue prefix "${own.queuePrefix}"`;
  }
  const owner = all.find(
    (other) =>
      other.namespace !== namespace && other.queuePrefix !== undefined && queue.startsWith(other.queuePrefix),
  );
  return owner
    ? `queue "${queue}" starts with "${owner.queuePrefix}", the queue prefix of another namespace`
    : undefined;
}

/**
 * Why a namespace's workflow or job may not use `vhost`, or undefined: it must be among the vhosts
 * the operator allowed the namespace; with none set, `default` takes any (the original's behaviour)
 * and every other namespace none.
 */
export function vhostProblem(
  namespace: string,
  settings: NamespaceSettings | undefined,
  vhost: string,
): string | undefined {
  const allowed = settings?.vhosts;
  if (allowed === undefined) {
    if (namespace === DEFAULT_NAMESPACE) return undefined;
    return `vhost "${vhost}" is not allowed in namespace "${namespace}": the operator allows vhosts with \`switchyard namespace set ${namespace} --vhost NAME\``;
  }
  if (allowed.includes(vhost)) return undefined;
  return `vhost "${vhost}" is not among namespace "${namespace}"'s allowed vhosts (${allowed.length ? allowed.map((v) => `"${v}"`).join(', ') : 'none'})`;
}
