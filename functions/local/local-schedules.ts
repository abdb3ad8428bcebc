import {
  dueTicks,
  formatDuration,
  nextTick,
  type ScheduleDefinition,
  scheduleKey,
  type WorkflowRegistry,
} from '../../engine/index.js';
import { type StartJob, startTicks } from '../manager/schedule-ticks.js';
import type { Logger } from '../telemetry/telemetry.js';

/** Where serve keeps the last tick it handled of each schedule (the SQLite store). */
export interface ScheduleCursors {
  scheduleCursors(workflow: string): Promise<Map<string, number>>;
  /** Moves the cursor forward only. */
  setScheduleCursor(workflow: string, schedule: string, tick: number): Promise<void>;
  /** Moves the cursor back to `at` if it is later. */
  capScheduleCursor(workflow: string, schedule: string, at: number): Promise<void>;
}

export interface LocalSchedulesOptions {
  registry: Pick<WorkflowRegistry, 'listWorkflows' | 'getWorkflow'>;
  cursors: ScheduleCursors;
  startJob: StartJob;
  logger: Logger;
  /** @default Date.now */
  clock?: () => number;
}

/** setTimeout cannot wait longer than this. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** A pass that failed (the store was unavailable) is tried again after this long. */
const RETRY_MS = 5_000;

/**
 * serve's schedules. A pass reads the latest definition of every workflow, and for each schedule
 * starts the jobs of the ticks due since its cursor (`dueTicks`: each missed tick, or the latest
 * one, bounded), then moves the cursor to now; one timer then waits for the earliest next tick.
 *
 * Crash safety without a transaction across the two writes: the jobs start under ids derived from
 * their tick, before the cursor moves. A crash between the two leaves the cursor behind, and the
 * next pass starts the same ticks again, which finds their jobs and creates none. A schedule seen
 * for the first time gets its cursor at now: ticks from before it existed do not run. A disabled
 * workflow's ticks are passed over (not caught up when it is enabled again).
 *
 * A cursor later than now was left by a clock that was ahead and has moved back: it is capped at
 * now (with a warning saying how far ahead it was), else no tick would start until the clock caught
 * up with it. The ticks it had passed that come round again find the jobs started for them then.
 */
export class LocalSchedules {
  private readonly clock: () => number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private seen = false;

  constructor(private readonly options: LocalSchedulesOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Runs a pass now (or right after the one in hand: passes never overlap, so a timer that fires
   * twice, or a registration during a pass, costs one more pass at most).
   */
  poke(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.passAndArm();
      } while (this.again && !this.stopped);
      this.running = undefined;
    })();
    return this.running;
  }

  /** Whether the last pass found any schedule (a definition registered without any may drop one). */
  get hasSchedules(): boolean {
    return this.seen;
  }

  /** No more passes; resolves when the one in hand (if any) ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async passAndArm(): Promise<void> {
    let next: number | undefined;
    try {
      next = await this.pass();
    } catch (error) {
      this.options.logger.error('schedules: a pass failed; trying again shortly', { error });
      next = this.clock() + RETRY_MS;
    }
    clearTimeout(this.timer);
    if (next === undefined || this.stopped) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, next - this.clock()));
    this.timer = setTimeout(() => void this.poke(), delay);
    this.timer.unref();
  }

  /** One pass over every schedule; the earliest next tick, if any. */
  async pass(): Promise<number | undefined> {
    const { registry, cursors, logger } = this.options;
    let earliest: number | undefined;
    let seen = false;
    for (const summary of await registry.listWorkflows()) {
      const stored = await registry.getWorkflow(summary.name);
      const schedules = stored?.definition.schedules ?? [];
      if (!stored || schedules.length === 0) continue;
      seen = true;
      const handled = await cursors.scheduleCursors(stored.name);
      for (const schedule of schedules) {
        // Read the clock per schedule: the jobs of one may take a while to start.
        const now = this.clock();
        const key = scheduleKey(schedule);
        let after = handled.get(key);
        if (after !== undefined && after > now) {
          logger.warn('schedules: the cursor is ahead of the clock (it moved back); counting from now', {
            workflow: stored.name,
            cron: schedule.cron,
            cursor: new Date(after).toISOString(),
            ahead: formatDuration(after - now),
            aheadMs: after - now,
          });
          await cursors.capScheduleCursor(stored.name, key, now);
          after = now;
        }
        if (after !== undefined && stored.enabled) await this.catchUp(stored.name, schedule, after, now);
        await cursors.setScheduleCursor(stored.name, key, now);
        const next = nextTick(schedule, now);
        if (next !== undefined && (earliest === undefined || next < earliest)) earliest = next;
      }
    }
    this.seen = seen;
    if (earliest !== undefined) logger.info('schedules: next tick', { at: new Date(earliest).toISOString() });
    return earliest;
  }

  private async catchUp(workflow: string, schedule: ScheduleDefinition, after: number, now: number) {
    const due = dueTicks(schedule, { after, now });
    if (due.skipped > 0) {
      this.options.logger.warn('schedules: missed ticks skipped', {
        workflow,
        cron: schedule.cron,
        skipped: due.skipped,
        catchUp: schedule.catchUp ?? 'all',
      });
    }
    const created = await startTicks(
      this.options.startJob,
      workflow,
      schedule,
      due.ticks,
      this.options.logger,
    );
    if (created > 0)
      this.options.logger.info('schedules: jobs started', { workflow, cron: schedule.cron, created });
  }
}
