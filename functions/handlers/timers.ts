import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, ScheduledEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type Housekeeping, type Timer, timerId, type WorkflowRegistry } from '../../engine/index.js';
import { decodeTimer, type SqsTimers } from '../adapters/sqs/timers.js';
import { BUNDLED_BUSES } from '../aws/bus-factories.js';
import type { Container } from '../aws/container.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import type { EventBridgeSchedules } from '../aws/eventbridge-schedules.js';
import { fromEnvironment } from '../aws/from-env.js';
import { parkedQueueOf } from '../aws/parked-queue.js';
import type { QueueMetricsReport } from '../aws/queue-metrics.js';
import { measureQueues } from '../aws/queue-metrics.js';
import { publishQueueMetrics } from '../aws/queue-metrics-emf.js';
import { repairSchedules, SCHEDULE_REPAIR_EVERY_MINUTES } from '../aws/schedule-repair.js';
import { handleScheduleTick } from '../aws/schedule-tick.js';
import { isScheduleTickEvent, type ScheduleTickEvent } from '../aws/schedule-tick-event.js';
import { settleSqsBatch } from '../aws/sqs-batch.js';
import type { DeliveryPump } from '../manager/delivery-pump.js';
import { poisonQueueOf } from '../transport/amqp/poison-queue-name.js';

export interface TimersDeps extends ManagerHandlerDeps {
  /** Where the sweep finds due timers and deletes jobs past retention. */
  store: Pick<Housekeeping, 'listTimers' | 'deleteFinishedJobs'>;
  timers: Pick<SqsTimers, 'resend'>;
  /** @default Date.now */
  clock?: () => number;
  /** Timers read from the store per round of the sweep. @default 500 */
  sweepPageSize?: number;
  /** Outbox entries older than this are sent again by the sweep. @default 60000 */
  recoverAfterMs?: number;
  /** Finished jobs older than this many days are deleted, by the sweep at the top of each hour. @default 0 (never) */
  retentionDays?: number;
  /**
   * The RabbitMQ bus: the manager's queue metrics, measured and published by every sweep (Amazon MQ
   * for RabbitMQ 4 publishes none per queue; functions/aws/queue-metrics.ts).
   */
  queueMetrics?: {
    measure: () => Promise<QueueMetricsReport>;
    publish: (report: QueueMetricsReport) => void;
  };
  /**
   * Workflow schedules' ticks (EventBridge Scheduler invokes this function at each), and their
   * repair every 10th minute of the sweep (functions/aws/schedule-repair.ts).
   */
  scheduleTicks?: {
    registry: Pick<WorkflowRegistry, 'getWorkflow' | 'listWorkflows'>;
    schedules: Pick<EventBridgeSchedules, 'rearm' | 'repair'>;
  };
  /** Webhook deliveries, posted by every sweep in the time it has left (docs/notifications.md). */
  deliveries?: Pick<DeliveryPump, 'runUntilIdle'>;
}

export type TimersEvent = SQSEvent | ScheduledEvent | ScheduleTickEvent;
export type TimersHandler = (event: TimersEvent, context?: Context) => Promise<SQSBatchResponse | undefined>;

/** What a sweep leaves of its invocation unused by webhook deliveries, to answer and drain. */
const DELIVERY_MARGIN_MS = 5_000;

/** Rounds of one sweep: with the default page, 10,000 due timers a minute. */
const MAX_SWEEP_ROUNDS = 20;

/**
 * Deadlines. From the timer queue: each message is a timer (adapters/sqs/timers.ts); a due one is fired, one
 * that is not due yet (more than 15 minutes out when armed) is sent again with a new delay. Every
 * minute (EventBridge): the sweep fires the store's due timers whose message was lost or never sent,
 * and sends again the outbox entries older than a minute, the work of a handler that crashed or ran
 * out of time between storing a transition and sending its requests; at 5, 15, 25… past the hour it
 * also re-arms the workflow schedules whose chain broke (functions/aws/schedule-repair.ts). From
 * EventBridge Scheduler: a workflow schedule's tick (functions/aws/schedule-tick.ts).
 */
export function createTimersHandler(deps: TimersDeps): TimersHandler {
  const { manager, store, telemetry } = deps;
  const clock = deps.clock ?? Date.now;

  const fireMessages = async (records: readonly SQSRecord[]): Promise<void> => {
    const now = clock();
    const due: Timer[] = [];
    const early: Timer[] = [];
    for (const record of records) {
      const timer = decodeTimer(record.body);
      if (!timer) {
        telemetry.logger.warn('not a timer message; dropped', { messageId: record.messageId });
        continue;
      }
      (timer.at > now ? early : due).push(timer);
    }
    if (early.length > 0) await deps.timers.resend(early);
    if (due.length > 0) await manager.fireTimers(due);
  };

  const sweep = async (context: Context | undefined): Promise<void> => {
    const now = clock();
    const pageSize = deps.sweepPageSize ?? 500;
    let fired = 0;
    let previous: string | undefined;
    for (let round = 0; round < MAX_SWEEP_ROUNDS; round++) {
      const due = await store.listTimers({ dueBy: now, limit: pageSize });
      const page = due.map((timer) => `${timerId(timer)}/${timer.kind}/${timer.attempt}/${timer.at}`).join();
      // The same page again: those timers are stale and the engine left them as they were.
      if (due.length === 0 || page === previous) break;
      previous = page;
      await manager.fireTimers(due);
      fired += due.length;
      if (due.length < pageSize) break;
    }
    const recovered = await manager.recover({ createdBefore: now - (deps.recoverAfterMs ?? 60_000) });
    let deleted = 0;
    const minute = new Date(now).getUTCMinutes();
    if (deps.retentionDays && minute === 0) {
      deleted = await store.deleteFinishedJobs(now - deps.retentionDays * 86_400_000);
    }
    let repaired = 0;
    // The schedules invoke this function as it was invoked now (its alias, deployed).
    if (deps.scheduleTicks && context && minute % SCHEDULE_REPAIR_EVERY_MINUTES === 5) {
      repaired = await repairSchedules(
        { ...deps.scheduleTicks, logger: telemetry.logger },
        context.invokedFunctionArn,
      );
    }
    if (deps.queueMetrics) {
      const report = await deps.queueMetrics.measure();
      deps.queueMetrics.publish(report);
      if (report.unknown.length > 0)
        telemetry.logger.warn('queues not measured', {
          queues: report.unknown.map((entry) => `${entry.queue}: ${entry.error}`).join('; '),
        });
    }
    // Last, in what is left of the invocation (with no context: the minute to the next sweep).
    const remaining = context ? context.getRemainingTimeInMillis() - DELIVERY_MARGIN_MS : 50_000;
    const posted = deps.deliveries ? await deps.deliveries.runUntilIdle(clock() + remaining) : 0;
    if (fired > 0 || recovered > 0 || deleted > 0 || repaired > 0 || posted > 0)
      telemetry.logger.info('timer sweep', { fired, recovered, deleted, repaired, posted });
  };

  return (event, context) =>
    drainingInvocation(deps, context, async () => {
      if (isScheduleTickEvent(event)) {
        if (!deps.scheduleTicks) throw new Error('a schedule tick, but SCHEDULE_GROUP is not set');
        await handleScheduleTick(event, {
          ...deps.scheduleTicks,
          startJob: (params) => manager.startJob(params),
          logger: telemetry.logger,
          clock,
        });
        return undefined;
      }
      if ('Records' in event) {
        return settleSqsBatch(
          event.Records,
          { all: fireMessages, one: (record) => fireMessages([record]) },
          telemetry.logger,
        );
      }
      await sweep(context);
      return undefined;
    });
}

const fromEnv = fromEnvironment(BUNDLED_BUSES, (container) =>
  createTimersHandler({
    ...container,
    retentionDays: container.env.retentionDays,
    scheduleTicks: container.schedules && { registry: container.store, schedules: container.schedules },
    queueMetrics: container.env.bus.kind === 'rabbitmq' ? brokerQueueMetrics(container) : undefined,
  }),
);

/** The RabbitMQ bus's queues, measured through the container's bus, published as EMF. */
function brokerQueueMetrics(container: Container): TimersDeps['queueMetrics'] {
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Switchyard',
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'switchyard',
  });
  return {
    measure: () =>
      measureQueues({
        registry: container.store,
        bus: container.bus,
        outbox: container.store,
        managerQueues: [
          container.env.replyQueue,
          parkedQueueOf(container.env.replyQueue),
          poisonQueueOf(container.env.replyQueue),
        ],
        clock: Date.now,
      }),
    publish: (report) => publishQueueMetrics(metrics, report),
  };
}

export const handler: TimersHandler = async (event, context) => (await fromEnv())(event, context);
