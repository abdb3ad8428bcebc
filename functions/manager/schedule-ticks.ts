import { type ScheduleDefinition, scheduleKey, tickJobId } from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import { ManagerError } from './errors.js';
import type { StartJobParams } from './start-job-params.js';

export type StartJob = (params: StartJobParams) => Promise<{ created: boolean }>;

/**
 * Starts the job of each tick, under the tick's derived id: a tick handled again (a restart before
 * its cursor moved, a duplicate timer or EventBridge event) finds its job and starts nothing. A tick
 * the manager refuses (the workflow was disabled, or its id holds another job) is logged and counted
 * as handled; any other error is thrown, so the caller tries the tick again later.
 * @returns how many jobs were created
 */
export async function startTicks(
  startJob: StartJob,
  workflow: string,
  schedule: ScheduleDefinition,
  ticks: readonly number[],
  logger: Logger,
): Promise<number> {
  const key = scheduleKey(schedule);
  let created = 0;
  for (const tick of ticks) {
    const id = tickJobId(workflow, key, tick);
    try {
      const started = await startJob({
        workflow,
        id,
        input: schedule.input ?? {},
        actor: { kind: 'schedule', name: schedule.cron },
      });
      if (started.created) created++;
    } catch (error) {
      if (!(error instanceof ManagerError) || error.code === 'unavailable') throw error;
      logger.warn('a schedule tick started no job', {
        workflow,
        cron: schedule.cron,
        tick: new Date(tick).toISOString(),
        jobId: id,
        reason: error.message,
      });
    }
  }
  return created;
}
