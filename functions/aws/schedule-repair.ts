import type { WorkflowRegistry } from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { EventBridgeSchedules } from './eventbridge-schedules.js';

export interface ScheduleRepairDeps {
  registry: Pick<WorkflowRegistry, 'listWorkflows' | 'getWorkflow'>;
  schedules: Pick<EventBridgeSchedules, 'repair'>;
  logger: Logger;
}

/** How often the timers function's minute sweep also repairs the schedules (every 10th minute). */
export const SCHEDULE_REPAIR_EVERY_MINUTES = 10;

/**
 * The chain of one-time schedules breaks when a tick fails for good (every Lambda retry failed, or
 * Scheduler dropped it): nothing would arm the next one. This sweep re-arms, for the tick it missed,
 * every schedule of the registered workflows that is missing or whose tick passed, so that a broken
 * chain fires again within minutes, and starts the jobs it missed (each under its derived id, once).
 * A workflow whose repair fails is logged and the others are still repaired; the next sweep tries again.
 * @param targetArn the timers function, as it was invoked (the schedules invoke it)
 * @returns how many schedules were created or re-armed
 */
export async function repairSchedules(deps: ScheduleRepairDeps, targetArn: string): Promise<number> {
  let repaired = 0;
  for (const summary of await deps.registry.listWorkflows()) {
    const stored = await deps.registry.getWorkflow(summary.name);
    if (!stored?.definition.schedules?.length) continue;
    try {
      const result = await deps.schedules.repair(stored.definition, targetArn);
      const fixed = [...result.created, ...result.updated];
      repaired += fixed.length;
      if (fixed.length > 0)
        deps.logger.warn('schedules repaired: a tick had failed for good', {
          workflow: stored.name,
          schedules: fixed.join(','),
        });
    } catch (error) {
      deps.logger.error('schedules not repaired; the next sweep tries again', {
        workflow: stored.name,
        error,
      });
    }
  }
  return repaired;
}
