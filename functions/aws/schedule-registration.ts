import {
  formatDuration,
  scheduleKey,
  type WorkflowDefinition,
  type WorkflowRegistry,
} from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { EventBridgeSchedules } from './eventbridge-schedules.js';

/**
 * After a definition is registered (by the API or the deploy's custom resource): its EventBridge
 * schedules are made to match it. The schedules of its earlier versions that it no longer has are
 * deleted (every version is kept, so the store knows each schedule that may exist). A failure throws:
 * registering the same definition again syncs again.
 */
export async function syncWorkflowSchedules(
  registry: Pick<WorkflowRegistry, 'listWorkflows' | 'getWorkflow'>,
  schedules: Pick<EventBridgeSchedules, 'sync'>,
  definition: WorkflowDefinition,
  logger: Logger,
): Promise<void> {
  const summary = (await registry.listWorkflows()).find((workflow) => workflow.name === definition.name);
  const former = new Set<string>();
  for (const { version } of summary?.versions ?? []) {
    const stored = await registry.getWorkflow(definition.name, version);
    for (const schedule of stored?.definition.schedules ?? []) former.add(scheduleKey(schedule));
  }
  if (former.size === 0 && !definition.schedules?.length) return;
  const result = await schedules.sync(definition, former);
  for (const { name, aheadMs } of result.ahead) {
    logger.warn('schedules: armed past its next tick by a clock that was ahead; re-armed for its next tick', {
      workflow: definition.name,
      schedule: name,
      ahead: formatDuration(aheadMs),
      aheadMs,
    });
  }
  logger.info('workflow schedules synced', {
    workflow: definition.name,
    created: result.created.length,
    updated: result.updated.length,
    deleted: result.deleted.length,
    unchanged: result.unchanged.length,
  });
}
