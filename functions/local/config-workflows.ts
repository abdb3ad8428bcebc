import { definitionText, type WorkflowDefinition, type WorkflowRegistry } from '../../engine/index.js';
import type { Manager } from '../manager/manager.js';
import type { Logger } from '../telemetry/telemetry.js';

/** What serve keeps, in its database, of the definitions its workflow files gave. */
export interface ConfigMemory {
  /** The definition text the workflow's file gave at the last start, if any. */
  configDefinition(name: string): Promise<string | undefined>;
  rememberConfigDefinition(name: string, text: string): Promise<void>;
  /** Whether some version of the workflow is this definition text. */
  hasWorkflowDefinition(name: string, text: string): Promise<boolean>;
}

/**
 * Registers the `--config` workflows at start-up. A file whose definition is the one it gave at
 * the previous start registers nothing: what was registered (or disabled) through the API since
 * stays. An edited file registers its definition, a new version unless it is the current one.
 *
 * A database written before serve remembered its files has nothing remembered: the file counts as
 * unchanged when its definition is one of the workflow's versions (it was registered before).
 */
export async function registerConfigWorkflows(
  definitions: readonly WorkflowDefinition[],
  deps: {
    manager: Pick<Manager, 'registerWorkflow'>;
    store: ConfigMemory & Pick<WorkflowRegistry, 'getWorkflow'>;
    logger: Logger;
  },
): Promise<void> {
  const { manager, store, logger } = deps;
  for (const definition of definitions) {
    const workflow = definition.name;
    const text = definitionText(definition);
    const latest = await store.getWorkflow(workflow);
    const remembered = await store.configDefinition(workflow);
    const unchanged =
      latest !== undefined &&
      (remembered === undefined ? await store.hasWorkflowDefinition(workflow, text) : remembered === text);
    if (unchanged) {
      if (remembered !== text) await store.rememberConfigDefinition(workflow, text);
      logger.info('workflow file unchanged since the last start', { workflow, version: latest.version });
      continue;
    }
    const { version, created } = await manager.registerWorkflow(definition);
    await store.rememberConfigDefinition(workflow, text);
    const latestFromApi =
      latest !== undefined && remembered !== undefined && definitionText(latest.definition) !== remembered;
    if (created && latestFromApi) {
      logger.warn('workflow file changed: its definition replaces a version registered through the API', {
        workflow,
        version,
        replaced: latest.version,
      });
    } else {
      logger.info(created ? 'workflow registered' : 'workflow unchanged', { workflow, version });
    }
  }
}
