import type { Timer, TimerKey } from '../job/types.js';

/**
 * Arms deadlines (reply timeouts, retry delays, job timeouts) after they are stored. Locally,
 * in-process timers re-armed from the store on start; deployed, delayed messages. A timer that fires
 * late or twice is harmless: the engine ignores a timer that no longer matches the job's state.
 */
export interface TimerScheduler {
  arm(timers: readonly Timer[]): Promise<void>;
  disarm(keys: readonly TimerKey[]): Promise<void>;
}
