import {
  formatDefinitionError,
  type NamespaceSettings,
  type NamespaceSettingsStore,
  namespaceOf,
  namespaceRuleProblems,
  namespaceSettingsProblems,
  sentQueueOf,
  vhostProblem,
  type WorkflowDefinition,
  type WorkflowRegistry,
  withQueuePrefix,
} from '../../engine/index.js';
import { ManagerError } from './errors.js';
import { deploymentPrefixProblem, deploymentQueueProblems, type QueueRules } from './queue-rules.js';

/** A change of a namespace's settings: a field left out stays as it is; `null` takes it away. */
export interface NamespaceSettingsChange {
  namespace: string;
  queuePrefix?: string | null;
  vhosts?: string[] | null;
}

/**
 * Carries out what the operator decided for each namespace (engine/definition/namespace-settings.ts):
 * a definition is registered with its namespace's queue prefix before its queues and only if every
 * queue and vhost is the namespace's to use; a job runs only on a vhost its namespace may use. A
 * document may state its namespace's prefix (the original's files carry one) but never choose it.
 */
export class NamespaceAuthority {
  constructor(
    private readonly store: NamespaceSettingsStore & Pick<WorkflowRegistry, 'listWorkflows' | 'getWorkflow'>,
    private readonly rules: QueueRules,
    private readonly clock: () => number,
  ) {}

  /** What the operator set for `namespace`, or undefined for nothing. */
  settings(namespace: string): Promise<NamespaceSettings | undefined> {
    return this.store.getNamespaceSettings(namespace);
  }

  list(): Promise<NamespaceSettings[]> {
    return this.store.listNamespaceSettings();
  }

  /** Applies an operator's change; refused whole (`invalid`) when the result could not be kept. */
  async change(change: NamespaceSettingsChange): Promise<NamespaceSettings> {
    const all = await this.store.listNamespaceSettings();
    const current = all.find((settings) => settings.namespace === change.namespace);
    const queuePrefix = change.queuePrefix === undefined ? current?.queuePrefix : change.queuePrefix;
    const vhosts = change.vhosts === undefined ? current?.vhosts : change.vhosts;
    const next: NamespaceSettings = {
      namespace: change.namespace,
      ...(queuePrefix === null || queuePrefix === undefined ? {} : { queuePrefix }),
      ...(vhosts === null || vhosts === undefined ? {} : { vhosts: [...new Set(vhosts)] }),
      updatedAt: this.clock(),
    };
    const deployment =
      next.queuePrefix === undefined ? undefined : deploymentPrefixProblem(next.queuePrefix, this.rules);
    const problems = [
      ...namespaceSettingsProblems(next, all),
      ...(deployment ? [deployment] : []),
      ...(next.queuePrefix !== undefined && next.queuePrefix !== current?.queuePrefix
        ? await this.queuesOfOthers(next.namespace, next.queuePrefix)
        : []),
    ];
    if (problems.length) {
      throw new ManagerError('invalid', `namespace "${change.namespace}": ${problems.join('; ')}`);
    }
    await this.store.saveNamespaceSettings(next);
    return next;
  }

  /**
   * The step queues of other namespaces' workflows (their latest versions) that start with `prefix`:
   * giving it to `namespace` would hand it their workers.
   */
  private async queuesOfOthers(namespace: string, prefix: string): Promise<string[]> {
    const found: string[] = [];
    for (const summary of await this.store.listWorkflows()) {
      if (namespaceOf(summary.name) === namespace) continue;
      const definition = (await this.store.getWorkflow(summary.name))?.definition;
      const steps = [
        ...(definition?.steps ?? []),
        ...(definition?.tasks ?? []).flatMap((task) => task.steps),
      ];
      for (const step of steps) {
        const queue = sentQueueOf(step);
        if (queue?.startsWith(prefix)) {
          found.push(
            `workflow "${summary.name}" of another namespace sends to queue "${queue}", under that prefix`,
          );
        }
      }
    }
    return found;
  }

  /**
   * `definition` (its name qualified) as its namespace registers it: its queues under the namespace's
   * prefix. Refused (`invalid`, every problem named) when the document states another prefix, or a
   * queue or vhost is not the namespace's to use.
   */
  async prepare(definition: WorkflowDefinition, statedPrefix?: string): Promise<WorkflowDefinition> {
    const namespace = namespaceOf(definition.name);
    const all = await this.store.listNamespaceSettings();
    const own = all.find((settings) => settings.namespace === namespace);
    if (statedPrefix !== undefined && statedPrefix !== own?.queuePrefix) {
      throw new ManagerError(
        'invalid',
        own?.queuePrefix === undefined
          ? `the document states queuePrefix "${statedPrefix}", but namespace "${namespace}" has no queue prefix: the operator sets one with \`switchyard namespace set ${namespace} --queue-prefix ${statedPrefix}\``
          : `the document states queuePrefix "${statedPrefix}", but namespace "${namespace}"'s is "${own.queuePrefix}" (the operator's setting): leave the key out or state that one`,
      );
    }
    const prepared = withQueuePrefix(definition, own?.queuePrefix);
    const problems = [
      ...namespaceRuleProblems(prepared, all, this.rules.replyQueue),
      ...deploymentQueueProblems(prepared, this.rules),
    ];
    if (problems.length) throw new ManagerError('invalid', problems.map(formatDefinitionError).join('\n'));
    return prepared;
  }

  /** Refuses (`invalid`) a job of `workflow` on `vhost` when its namespace may not use that vhost. */
  async checkVhost(workflow: string, vhost: string): Promise<void> {
    const namespace = namespaceOf(workflow);
    const problem = vhostProblem(namespace, await this.store.getNamespaceSettings(namespace), vhost);
    if (problem) throw new ManagerError('invalid', problem);
  }
}
