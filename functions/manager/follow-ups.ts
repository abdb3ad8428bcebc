import {
  afterChildrenFinished,
  type ChildFinished,
  ChildGatherer,
  type CompiledWorkflow,
  callFinishedEvent,
  childCommand,
  type DeliveryLog,
  type FollowUp,
  failedChildEntry,
  fanOutOpen,
  findStep,
  followParentEvent,
  freeSlots,
  type GatheredChild,
  graphOf,
  type JobRecord,
  type JobStatus,
  type NewDelivery,
  newDeliveryRecord,
  type RunningLimit,
  resetOnResume,
  resumeFanOut,
  type SlotLimits,
  type StepNode,
  type Store,
  slotIndexesFrom,
  slotStarts,
  slotTurn,
  unhandled,
} from '../../engine/index.js';
import type { Logger } from '../telemetry/telemetry.js';
import { ManagerError } from './errors.js';
import type { JobEventInput } from './job-event-input.js';
import type { StartJobParams } from './start-job-params.js';

const PAGE = 1000;

/** What the follow-up runner needs of the manager: reads, and applying events. */
export interface FollowUpHost {
  store: Pick<Store, 'getJob' | 'listChildren' | 'getFanCounts' | 'setFanCounts' | 'listQueued' | 'getTree'>;
  workflows: { get(name: string, version: number): Promise<CompiledWorkflow | undefined> };
  logger: Logger;
  /** Each input's outcome: the job as it is after the events (absent for a missing job). */
  apply(inputs: readonly JobEventInput[]): Promise<readonly { job?: JobRecord }[]>;
  startJob(params: StartJobParams): Promise<unknown>;
  /** A workflow's `maxRunning` with its counters (undefined: no limit). */
  runningLimit(workflow: string): Promise<RunningLimit | undefined>;
  /** Where `notify` follow-ups record their deliveries (undefined: they are logged and dropped). */
  deliveries?: Pick<DeliveryLog, 'addDeliveries'>;
  clock: () => number;
}

/** Rounds of promotions one `promoteQueued` makes before leaving the rest to a later one (it throws). */
const MAX_PROMOTE_ROUNDS = 50;

/**
 * The work a transition leaves for after its commit, where it needs more than one job: counting a
 * finished child and fanning in, starting the next child of a limited fan-out, cancelling or resuming
 * a fan-out step's children, creating a large fan-out's next slice of children, starting the queued
 * jobs of a `maxRunning` workflow whose slot was given back. Each is idempotent,
 * so running one twice (after a crash) is harmless. The rules are the engine's; this reads what they
 * need and applies the events they call for.
 */
export class FollowUpRunner {
  constructor(private readonly host: FollowUpHost) {}

  async run(followUps: readonly FollowUp[]): Promise<void> {
    const finishedBySteps = new Map<string, ChildFinished[]>();
    const promotions = new Set<string>();
    const deliveries: NewDelivery[] = [];
    for (const followUp of followUps) {
      switch (followUp.kind) {
        case 'childFinished': {
          const key = `${followUp.parentId}\u0000${followUp.step}`;
          const list = finishedBySteps.get(key);
          if (list) list.push(followUp);
          else finishedBySteps.set(key, [followUp]);
          break;
        }
        case 'cancelChildren':
          await this.commandChildren('cancel', followUp.jobId, followUp.step);
          break;
        case 'pauseChildren':
          await this.commandChildren('pause', followUp.jobId, followUp.step);
          break;
        case 'unpauseChildren':
          await this.unpauseChildren(followUp.jobId, followUp.step);
          break;
        case 'resumeChildren':
          await this.resumeChildren(followUp.jobId, followUp.step);
          break;
        case 'startJob':
          await this.startJob(followUp);
          break;
        case 'callFinished':
          await this.callFinished(followUp);
          break;
        case 'abortJob':
          await this.host.apply([
            { jobId: followUp.root, event: { type: 'abort', reason: followUp.reason } },
          ]);
          break;
        case 'pauseJob':
          await this.host.apply([{ jobId: followUp.jobId, event: { type: 'pause' } }]);
          break;
        case 'resumeJob':
          await this.host.apply([{ jobId: followUp.jobId, event: { type: 'resume' } }]);
          break;
        case 'cancelJob':
          await this.host.apply([{ jobId: followUp.jobId, event: { type: 'cancel' } }]);
          break;
        case 'promoteQueued':
          // Once per workflow for the batch: one pass fills every slot the batch's ends gave back.
          promotions.add(followUp.workflow);
          break;
        case 'createChildren':
          await this.host.apply([
            {
              jobId: followUp.jobId,
              event: { type: 'createChildren', step: followUp.step, from: followUp.from },
            },
          ]);
          break;
        case 'startChildren':
          await this.startChildren(followUp.jobId, followUp.step, followUp.ids);
          break;
        case 'notify':
          deliveries.push(...followUp.deliveries);
          break;
        default:
          unhandled(followUp, 'follow-up');
      }
    }
    for (const finished of finishedBySteps.values()) await this.childrenFinished(finished);
    for (const workflow of promotions) await this.promoteQueued(workflow);
    if (deliveries.length) await this.recordDeliveries(deliveries);
  }

  /** Webhook deliveries into the delivery log, due at once; the hosts' delivery pump posts them. */
  private async recordDeliveries(deliveries: readonly NewDelivery[]): Promise<void> {
    const log = this.host.deliveries;
    if (!log) {
      this.host.logger.warn('webhook deliveries dropped: this store keeps no delivery log', {
        count: deliveries.length,
      });
      return;
    }
    const now = this.host.clock();
    await log.addDeliveries(deliveries.map((delivery) => newDeliveryRecord(delivery, now)));
  }

  /**
   * Starts an `onFailure` job or a `workflow:` step's job. Its id is derived, so a start carried
   * out again finds that job. A workflow that is missing or disabled now cannot start one: a called
   * job's step fails with the reason (or its caller follows its tree's root, when that has ended or
   * is paused: engine/job/tree-quota.ts); an `onFailure` job's is logged, not retried.
   */
  private async startJob(followUp: Extract<FollowUp, { kind: 'startJob' }>): Promise<void> {
    const { workflow, version, id, input, causedBy, calledBy, treeRoot, signals } = followUp;
    try {
      await this.host.startJob({ workflow, version, id, input, causedBy, calledBy, treeRoot, signals });
    } catch (error) {
      if (!(error instanceof ManagerError) || error.code === 'unavailable') throw error;
      if (calledBy) {
        await this.host.apply([
          {
            tree: treeRoot === undefined ? undefined : await this.host.store.getTree(treeRoot),
            jobId: calledBy.id,
            event: {
              type: 'callFinished',
              step: calledBy.step,
              attempt: calledBy.attempt,
              childId: id,
              status: 'failed',
              message: `it could not start: ${error.message}`,
            },
          },
        ]);
        return;
      }
      this.host.logger.error('the onFailure job could not start', {
        jobId: causedBy,
        workflow,
        followUp: id,
        error: error.message,
      });
    }
  }

  /**
   * A job of `workflow` gave its slot back (or its limit changed): the queued jobs whose turn came
   * start, first in line first, while slots are free. Each promotion is a commit conditional on the
   * counters (engine/job/running-limit.ts), so promotions racing in several managers never start
   * more than the limit; one that lost is read again. Done again after a crash, it starts nobody
   * twice: a job promoted already is no longer queued.
   *
   * One at a time, in the queue's order, stopping at the first that finds no slot: the free slots
   * counted may have been taken since (by another manager's promotions), and a store may land one
   * call's commits in any order (DynamoDB's run in parallel), so promoting the listed jobs together
   * could start a later one and leave an earlier one queued.
   */
  async promoteQueued(workflow: string): Promise<void> {
    for (let round = 0; round < MAX_PROMOTE_ROUNDS; round++) {
      const free = freeSlots(await this.host.runningLimit(workflow));
      if (free === 0) return;
      const queued = await this.host.store.listQueued(workflow, Math.min(free ?? PAGE, PAGE));
      if (!queued.length) return;
      for (const { jobId } of queued) {
        const [outcome] = await this.host.apply([{ jobId, event: { type: 'promote' } }]);
        if (outcome?.job?.status === 'queued') return;
      }
    }
    throw new Error(
      `workflow "${workflow}": its queued jobs kept losing races for ${MAX_PROMOTE_ROUNDS} rounds`,
    );
  }

  /** A called job ended: its caller's step completes with its result, or fails with its error. */
  private async callFinished(followUp: Extract<FollowUp, { kind: 'callFinished' }>): Promise<void> {
    const called = await this.host.store.getJob(followUp.jobId);
    const event = called && callFinishedEvent(followUp, called);
    if (event) await this.host.apply([{ jobId: followUp.callerId, event }]);
  }

  /**
   * The fan-out step of `parent` named `step`, when it is still running (in a running or a paused
   * job: a paused job's children still finish, and their step fans in; only no child starts).
   */
  private async runningFanOut(
    parentId: string,
    step: string,
  ): Promise<{ parent: JobRecord; node: StepNode } | undefined> {
    const parent = await this.host.store.getJob(parentId);
    if (!fanOutOpen(parent, step)) return undefined;
    const workflow = await this.host.workflows.get(parent.workflow, parent.version);
    const node = workflow && graphOf(workflow, parent.task).byName.get(step);
    return node?.task ? { parent, node } : undefined;
  }

  /** Children of one fan-out step finished: carries out the engine's `afterChildrenFinished`. */
  private async childrenFinished(finished: readonly ChildFinished[]): Promise<void> {
    const { parentId, step } = finished[0] as ChildFinished;
    const fanOut = await this.runningFanOut(parentId, step);
    if (!fanOut) return;
    const { continueOnError } = fanOut.node;
    const failed = finished.some((item) => item.status === 'failed');
    const counts =
      failed && !continueOnError ? undefined : await this.host.store.getFanCounts(parentId, step);
    const limits = findStep(fanOut.parent, step)?.children;
    const plan = afterChildrenFinished(finished, counts, limits, continueOnError);
    if (plan.kind === 'failStep') {
      const child = await this.childAt(parentId, step, plan.index);
      await this.host.apply([
        {
          jobId: parentId,
          event: {
            type: 'childFailed',
            step,
            index: plan.index,
            childId: child?.id ?? '?',
            message: child?.error?.message ?? 'the child job failed',
          },
        },
      ]);
    } else if (plan.kind === 'fanIn') {
      await this.fanIn(fanOut.parent, fanOut.node);
    } else if (plan.kind === 'nextInSlots' && limits) {
      // A paused job starts no child: at resume, `unpauseChildren` starts each slot's next one.
      if (fanOut.parent.status === 'paused') return;
      const starts: string[] = [];
      for (const from of plan.from) {
        const next = await this.nextInSlot(parentId, step, from, limits, continueOnError);
        if (next) starts.push(next.id);
      }
      await this.startChecked(parentId, starts);
    }
  }

  /** The child at `index` of a fan-out step, from the index on when it is missing. */
  private async childAt(parentId: string, step: string, index: number): Promise<JobRecord | undefined> {
    const { children } = await this.host.store.listChildren(parentId, step, { fromIndex: index, limit: 1 });
    return children[0];
  }

  /** Children created waiting in a later slice of a fan-out start, while their step still runs. */
  private async startChildren(parentId: string, step: string, ids: readonly string[]): Promise<void> {
    const fanOut = await this.runningFanOut(parentId, step);
    // Paused: `unpauseChildren` starts them at resume.
    if (fanOut?.parent.status !== 'running') return;
    await this.startChecked(parentId, ids);
  }

  /**
   * Starts children of a job read running, then reads it again: paused in the meantime, its
   * `pauseChildren` may have listed them before they started, so they are paused here (pause is
   * idempotent). Either that listing saw them started, or this read comes after the pause.
   */
  private async startChecked(parentId: string, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.host.apply(ids.map((id): JobEventInput => ({ jobId: id, event: { type: 'start' } })));
    await this.followParent(parentId, ids, 'running');
  }

  /**
   * After pausing or resuming (or starting) children, the parent is read again: when it was resumed
   * or paused meanwhile, the other follow-up may have listed these children before this one changed
   * them, so they are brought to the parent's state here. Pause and resume are idempotent, and
   * events to one job are applied one at a time, so the children end as their parent last was.
   */
  private async followParent(
    parentId: string,
    ids: readonly string[],
    expected: 'running' | 'paused',
  ): Promise<void> {
    if (!ids.length) return;
    const parent = await this.host.store.getJob(parentId);
    const event = followParentEvent(parent?.status, expected);
    if (event) await this.host.apply(ids.map((id): JobEventInput => ({ jobId: id, event })));
  }

  /** The child the slot of `index` starts next (engine/job/concurrency-slots.ts), if any. */
  private async nextInSlot(
    parentId: string,
    step: string,
    index: number,
    limits: SlotLimits,
    failedPassesOn: boolean,
  ): Promise<JobRecord | undefined> {
    for (const i of slotIndexesFrom(index, limits)) {
      const found = await this.childAt(parentId, step, i);
      const child = found?.parent?.index === i ? found : undefined;
      const turn = slotTurn(child?.status, failedPassesOn);
      if (turn === 'passOn') continue;
      return turn === 'start' ? child : undefined;
    }
    return undefined;
  }

  /**
   * Every child completed (or, for a `continueOnError` step, completed or failed): gather their
   * results in pages and complete the step.
   */
  private async fanIn(parent: JobRecord, node: StepNode): Promise<void> {
    const task = node.task as NonNullable<StepNode['task']>;
    const total = findStep(parent, node.name)?.children?.total ?? 0;
    const gatherer = new ChildGatherer(task, total);
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.host.store.listChildren(parent.id, node.name, { fromIndex, limit: PAGE });
      gatherer.add(
        page.children.flatMap((child): GatheredChild[] => {
          const index = child.parent?.index ?? -1;
          if (child.status === 'completed') return [{ index, input: child.input, result: child.result }];
          if (child.status !== 'failed' || !node.continueOnError) return [];
          return [{ index, input: child.input, error: failedChildEntry(child, node.name) }];
        }),
      );
      fromIndex = page.nextIndex;
    }
    if (!gatherer.complete) {
      this.host.logger.warn('fan-in found children not completed; waiting', {
        jobId: parent.id,
        step: node.name,
        missing: gatherer.missing,
      });
      return;
    }
    await this.host.apply([
      { jobId: parent.id, event: { type: 'fanIn', step: node.name, output: gatherer.output() } },
    ]);
  }

  /** A retried fan-out step: resets its children page by page, then carries out `resumeFanOut`. */
  private async resumeChildren(parentId: string, step: string): Promise<void> {
    const fanOut = await this.runningFanOut(parentId, step);
    const limits = fanOut && findStep(fanOut.parent, step)?.children;
    if (!fanOut || !limits) return;
    const statuses: (JobStatus | undefined)[] = new Array(limits.total);
    const ids: string[] = new Array(limits.total);
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.host.store.listChildren(parentId, step, { fromIndex, limit: PAGE });
      const resets: JobEventInput[] = [];
      for (const child of page.children) {
        const index = child.parent?.index ?? -1;
        ids[index] = child.id;
        statuses[index] = child.status;
        if (resetOnResume(child.status)) {
          resets.push({ jobId: child.id, event: { type: 'retry', hold: true } });
          statuses[index] = 'waiting';
        }
      }
      if (resets.length) await this.host.apply(resets);
      fromIndex = page.nextIndex;
    }
    const plan = resumeFanOut(statuses, limits);
    await this.host.store.setFanCounts(parentId, step, plan.counts);
    if (plan.fanIn) return this.fanIn(fanOut.parent, fanOut.node);
    // Paused since its retry: `unpauseChildren` starts them at resume.
    if (fanOut.parent.status === 'paused') return;
    await this.startChecked(
      parentId,
      plan.starts.map((i) => ids[i] as string),
    );
  }

  /**
   * A stopped fan-out step (`cancel`) or its paused job (`pause`): each child gets the engine's
   * `childCommand`, page by page (theirs follow in turn). Paused children then follow their parent
   * as it is now (it may have been resumed meanwhile).
   */
  private async commandChildren(command: 'cancel' | 'pause', parentId: string, step: string): Promise<void> {
    const changed: string[] = [];
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.host.store.listChildren(parentId, step, { fromIndex, limit: PAGE });
      const events = page.children.flatMap((child): JobEventInput[] => {
        const event = childCommand(command, child.status);
        return event ? [{ jobId: child.id, event }] : [];
      });
      if (events.length) await this.host.apply(events);
      for (const input of events) changed.push(input.jobId);
      fromIndex = page.nextIndex;
    }
    if (command === 'pause') await this.followParent(parentId, changed, 'paused');
  }

  /**
   * A resumed job's fan-out step: its paused children resume, then each slot starts its next child
   * (engine/job/concurrency-slots.ts): the turns that came while the job was paused.
   */
  private async unpauseChildren(parentId: string, step: string): Promise<void> {
    const fanOut = await this.runningFanOut(parentId, step);
    const limits = fanOut && findStep(fanOut.parent, step)?.children;
    if (fanOut?.parent.status !== 'running' || !limits) return;
    const statuses: (JobStatus | undefined)[] = new Array(limits.total);
    const ids: string[] = new Array(limits.total);
    const resumed: string[] = [];
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.host.store.listChildren(parentId, step, { fromIndex, limit: PAGE });
      const resumes: JobEventInput[] = [];
      for (const child of page.children) {
        const index = child.parent?.index ?? -1;
        ids[index] = child.id;
        const event = childCommand('resume', child.status);
        statuses[index] = event ? 'running' : child.status;
        if (event) resumes.push({ jobId: child.id, event });
      }
      if (resumes.length) await this.host.apply(resumes);
      for (const input of resumes) resumed.push(input.jobId);
      fromIndex = page.nextIndex;
    }
    const starts = slotStarts((index) => statuses[index], limits).map((i) => ids[i] as string);
    if (starts.length)
      await this.host.apply(starts.map((id): JobEventInput => ({ jobId: id, event: { type: 'start' } })));
    await this.followParent(parentId, [...resumed, ...starts], 'running');
  }
}
