import { dueTicks, nextTick, scheduleKey, type WorkflowRegistry } from '../../engine/index.js';
import { type StartJob, startTicks } from '../manager/schedule-ticks.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { EventBridgeSchedules } from './eventbridge-schedules.js';
import type { ScheduleTickEvent } from './schedule-tick-event.js';

export interface ScheduleTickDeps {
  registry: Pick<WorkflowRegistry, 'getWorkflow'>;
  startJob: StartJob;
  schedules: Pick<EventBridgeSchedules, 'rearm'>;
  logger: Logger;
  /** @default Date.now */
  clock?: () => number;
}

/**
 * A tick from EventBridge Scheduler: the jobs of the ticks due from the event's tick to now (that
 * tick, and any missed since: each once, or the latest, per `catchUp`), each under its derived id, so
 * an event delivered twice starts nothing more; then the schedule is armed for the next tick. A
 * failure throws: Lambda invokes again (twice, then the failure queue), and should every try fail,
 * the repair sweep re-arms the schedule for the tick it missed (functions/handlers/timers.ts).
 */
export async function handleScheduleTick(event: ScheduleTickEvent, deps: ScheduleTickDeps): Promise<void> {
  const { logger } = deps;
  const stored = await deps.registry.getWorkflow(event.workflow);
  const schedule = stored?.definition.schedules?.find((entry) => scheduleKey(entry) === event.schedule);
  if (!stored || !schedule) {
    // The registration that removed it deletes its EventBridge schedule.
    logger.warn('a tick of a schedule the workflow no longer has; ignored', { ...event });
    return;
  }
  const tick = Date.parse(event.tick);
  const now = Math.max((deps.clock ?? Date.now)(), tick);
  const due = dueTicks(schedule, { after: tick - 1, now });
  if (due.skipped > 0)
    logger.warn('schedules: missed ticks skipped', { workflow: stored.name, skipped: due.skipped });
  const created = await startTicks(deps.startJob, stored.name, schedule, due.ticks, logger);
  const next = nextTick(schedule, now);
  if (next !== undefined) await deps.schedules.rearm(stored.name, event.schedule, next);
  logger.info('schedule tick', {
    workflow: stored.name,
    tick: event.tick,
    created,
    next: next === undefined ? undefined : new Date(next).toISOString(),
  });
}
