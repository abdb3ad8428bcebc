/*
 * The event apart from the Scheduler client (eventbridge-schedules.ts): the timers function tells a
 * tick from its other events without loading the client, which only a tick needs.
 */

/** The `switchyard` field of the event EventBridge Scheduler sends the timers function at a tick. */
export const SCHEDULE_TICK = 'schedule-tick';

/** What each schedule sends at its tick (its target's `Input`). */
export interface ScheduleTickEvent {
  switchyard: typeof SCHEDULE_TICK;
  workflow: string;
  /** `scheduleKey` of the schedule in the workflow's latest definition. */
  schedule: string;
  /** The tick this invocation is for (RFC 3339, UTC): ticks from it to now are due. */
  tick: string;
}

export function isScheduleTickEvent(event: unknown): event is ScheduleTickEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { switchyard, workflow, schedule, tick } = event as Record<string, unknown>;
  return (
    switchyard === SCHEDULE_TICK &&
    typeof workflow === 'string' &&
    typeof schedule === 'string' &&
    typeof tick === 'string' &&
    !Number.isNaN(Date.parse(tick))
  );
}
