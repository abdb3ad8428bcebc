import {
  ChildGatherer,
  type FollowUp,
  findStep,
  graphOf,
  type JobRecord,
  type StepNode,
} from '../../engine/index.js';
import type { JobEventInput, Manager } from './manager.js';

type ChildFinished = Extract<FollowUp, { kind: 'childFinished' }>;

const PAGE = 1000;

/**
 * The work a transition leaves for after its commit, where it needs more than one job: counting a
 * finished child and fanning in, starting the next child of a limited fan-out, cancelling or resuming
 * a fan-out step's children, creating a large fan-out's next slice of children. Each is idempotent,
 * so running one twice (after a crash) is harmless.
 */
export class FollowUpRunner {
  constructor(private readonly manager: Manager) {}

  async run(followUps: readonly FollowUp[]): Promise<void> {
    const finishedBySteps = new Map<string, ChildFinished[]>();
    for (const followUp of followUps) {
      if (followUp.kind === 'childFinished') {
        const key = `${followUp.parentId}\u0000${followUp.step}`;
        const list = finishedBySteps.get(key);
        if (list) list.push(followUp);
        else finishedBySteps.set(key, [followUp]);
      } else if (followUp.kind === 'cancelChildren') {
        await this.cancelChildren(followUp.jobId, followUp.step);
      } else if (followUp.kind === 'resumeChildren') {
        await this.resumeChildren(followUp.jobId, followUp.step);
      } else if (followUp.kind === 'createChildren') {
        await this.manager.apply([
          {
            jobId: followUp.jobId,
            event: { type: 'createChildren', step: followUp.step, from: followUp.from },
          },
        ]);
      } else {
        await this.startChildren(followUp.jobId, followUp.step, followUp.ids);
      }
    }
    for (const finished of finishedBySteps.values()) await this.childrenFinished(finished);
  }

  /** The fan-out step of `parent` named `step`, when it is still running. */
  private async runningFanOut(
    parentId: string,
    step: string,
  ): Promise<{ parent: JobRecord; node: StepNode } | undefined> {
    const parent = await this.manager.store.getJob(parentId);
    if (parent?.status !== 'running' || findStep(parent, step)?.status !== 'running') return undefined;
    const workflow = await this.manager.workflows.get(parent.workflow, parent.version);
    const node = workflow && graphOf(workflow, parent.task).byName.get(step);
    return node?.task ? { parent, node } : undefined;
  }

  /** Children of one fan-out step finished: fail the step, fan in, or start the next children. */
  private async childrenFinished(finished: readonly ChildFinished[]): Promise<void> {
    const { parentId, step } = finished[0] as ChildFinished;
    const fanOut = await this.runningFanOut(parentId, step);
    if (!fanOut) return;
    const failed = finished.find((item) => item.status === 'failed');
    if (failed) {
      const { children } = await this.manager.store.listChildren(parentId, step, {
        fromIndex: failed.index,
        limit: 1,
      });
      const child = children[0];
      await this.manager.apply([
        {
          jobId: parentId,
          event: {
            type: 'childFailed',
            step,
            index: failed.index,
            childId: child?.id ?? '?',
            message: child?.error?.message ?? 'the child job failed',
          },
        },
      ]);
      return;
    }
    const counts = await this.manager.store.getFanCounts(parentId, step);
    if (counts && counts.failed === 0 && counts.done >= counts.total) {
      await this.fanIn(fanOut.parent, fanOut.node);
      return;
    }
    const limits = findStep(fanOut.parent, step)?.children;
    if (limits && limits.concurrency < limits.total) {
      const starts: JobEventInput[] = [];
      for (const item of finished) {
        const next = await this.nextInSlot(parentId, step, item.index + limits.concurrency, limits);
        if (next) starts.push({ jobId: next.id, event: { type: 'start' } });
      }
      await this.manager.apply(starts);
    }
  }

  /** Children created waiting in a later slice of a fan-out start, while their step still runs. */
  private async startChildren(parentId: string, step: string, ids: readonly string[]): Promise<void> {
    if (!(await this.runningFanOut(parentId, step))) return;
    await this.manager.apply(ids.map((id): JobEventInput => ({ jobId: id, event: { type: 'start' } })));
  }

  /**
   * A limited fan-out runs its children in `concurrency` slots: slot s runs children s, s + c, s + 2c…
   * one after the other, so at most c are in flight without a shared counter. The next child of a slot
   * is the first one from `index` on that has not completed; only a waiting one is started.
   */
  private async nextInSlot(
    parentId: string,
    step: string,
    index: number,
    limits: { total: number; concurrency: number },
  ): Promise<JobRecord | undefined> {
    for (let i = index; i < limits.total; i += limits.concurrency) {
      const { children } = await this.manager.store.listChildren(parentId, step, { fromIndex: i, limit: 1 });
      const child = children[0];
      if (!child || child.parent?.index !== i) return undefined;
      if (child.status === 'completed') continue;
      return child.status === 'waiting' ? child : undefined;
    }
    return undefined;
  }

  /** Every child completed: gather their results in pages and complete the step. */
  private async fanIn(parent: JobRecord, node: StepNode): Promise<void> {
    const task = node.task as NonNullable<StepNode['task']>;
    const total = findStep(parent, node.name)?.children?.total ?? 0;
    const gatherer = new ChildGatherer(task, total);
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.manager.store.listChildren(parent.id, node.name, { fromIndex, limit: PAGE });
      gatherer.add(
        page.children
          .filter((child) => child.status === 'completed')
          .map((child) => ({ index: child.parent?.index ?? -1, input: child.input, result: child.result })),
      );
      fromIndex = page.nextIndex;
    }
    if (!gatherer.complete) {
      this.manager.telemetry.logger.warn('fan-in found children not completed; waiting', {
        jobId: parent.id,
        step: node.name,
        missing: gatherer.missing,
      });
      return;
    }
    await this.manager.apply([
      { jobId: parent.id, event: { type: 'fanIn', step: node.name, output: gatherer.output() } },
    ]);
  }

  /**
   * A stopped fan-out step: its running children are cancelled (and theirs, in turn); children not yet
   * dispatched stay so.
   */
  private async cancelChildren(parentId: string, step: string): Promise<void> {
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.manager.store.listChildren(parentId, step, { fromIndex, limit: PAGE });
      const cancels = page.children
        .filter((child) => child.status === 'running')
        .map((child): JobEventInput => ({ jobId: child.id, event: { type: 'cancel' } }));
      if (cancels.length) await this.manager.apply(cancels);
      fromIndex = page.nextIndex;
    }
  }

  /**
   * A retried fan-out step: failed and cancelled children are reset (they wait again), completed
   * ones keep their results, the counters are recounted, and each slot starts its next child.
   */
  private async resumeChildren(parentId: string, step: string): Promise<void> {
    const fanOut = await this.runningFanOut(parentId, step);
    const limits = fanOut && findStep(fanOut.parent, step)?.children;
    if (!fanOut || !limits) return;
    const statuses: JobRecord['status'][] = new Array(limits.total);
    const ids: string[] = new Array(limits.total);
    let done = 0;
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await this.manager.store.listChildren(parentId, step, { fromIndex, limit: PAGE });
      const resets: JobEventInput[] = [];
      for (const child of page.children) {
        const index = child.parent?.index ?? -1;
        ids[index] = child.id;
        statuses[index] = child.status;
        if (child.status === 'completed') done++;
        if (child.status === 'failed' || child.status === 'cancelled') {
          resets.push({ jobId: child.id, event: { type: 'retry', hold: true } });
          statuses[index] = 'waiting';
        }
      }
      if (resets.length) await this.manager.apply(resets);
      fromIndex = page.nextIndex;
    }
    await this.manager.store.setFanCounts(parentId, step, { total: limits.total, done, failed: 0 });
    if (done === limits.total) return this.fanIn(fanOut.parent, fanOut.node);
    const starts: JobEventInput[] = [];
    for (let slot = 0; slot < Math.min(limits.concurrency, limits.total); slot++) {
      for (let i = slot; i < limits.total; i += limits.concurrency) {
        if (statuses[i] === 'completed') continue;
        if (statuses[i] === 'waiting') starts.push({ jobId: ids[i] as string, event: { type: 'start' } });
        break;
      }
    }
    await this.manager.apply(starts);
  }
}
