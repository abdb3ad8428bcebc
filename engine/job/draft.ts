import type { CompiledWorkflow, Graph } from '../definition/compile.js';
import { graphOf } from '../definition/compile.js';
import type { EngineContext } from './events.js';
import { ListEdit } from './persistent-list.js';
import type { ChildOutcome, Effects, Rejection } from './transition.js';
import type { JobRecord, StepState } from './types.js';

/**
 * A job being changed by one transition: a copy of its record that step functions edit, the set
 * of steps they touched, and the effects they produce. The copy shares the record's step list,
 * which is persistent: a change copies only the path to the step it changes, once per transition.
 */
export class Draft {
  readonly job: JobRecord;
  readonly graph: Graph;
  readonly changedSteps = new Set<string>();
  /**
   * A step was set suspended, or a signal step running, in this transition: only then can a job that
   * did not wait for someone start to (listed-status.ts, `settleWaits`).
   */
  mayStartWaiting = false;
  /** The job's own fields (not its steps) that `updateJob` set. */
  readonly changedFields = new Set<keyof JobRecord>();
  changed = false;
  dropUnsent = false;
  /** The job followed its tree's root, paused or ended (tree-quota.ts): its commit rests on the root so. */
  followedRoot = false;
  ignored?: string;
  rejected?: Rejection;
  private readonly stepsEdit = new ListEdit();
  /** Where a child's final state goes: the transition (an existing child) or its parent's counters. */
  onFinished: (outcome: ChildOutcome) => void;

  constructor(
    job: JobRecord,
    readonly workflow: CompiledWorkflow,
    readonly context: EngineContext,
    readonly effects: Effects,
    onFinished?: (outcome: ChildOutcome) => void,
  ) {
    this.job = { ...job };
    this.graph = graphOf(workflow, job.task);
    this.onFinished = onFinished ?? (() => {});
  }

  get now(): number {
    return this.context.now;
  }

  step(name: string): StepState {
    const state = this.job.steps.get(this.indexOf(name));
    if (!state) throw new Error(`job ${this.job.id} has no state for step ${name}`);
    return state;
  }

  private indexOf(name: string): number {
    const node = this.graph.byName.get(name);
    if (!node) throw new Error(`job ${this.job.id} has no step ${name}`);
    return node.index;
  }

  /**
   * Replaces a step's state with `changes` applied. A field set to `undefined` is cleared (it stays
   * as an undefined property, which JSON and the stores leave out; deleting it would make V8 turn
   * the object into a slow dictionary).
   */
  updateStep(name: string, changes: Partial<StepState>): StepState {
    const node = this.graph.byName.get(name);
    if (!node) throw new Error(`job ${this.job.id} has no step ${name}`);
    const index = node.index;
    if (changes.status === 'suspended' || (changes.status === 'running' && node.kind === 'signal'))
      this.mayStartWaiting = true;
    const next = { ...(this.job.steps.get(index) as StepState), ...changes };
    this.job.steps = this.job.steps.with(index, next, this.stepsEdit);
    this.changedSteps.add(name);
    this.changed = true;
    return next;
  }

  updateJob(changes: Partial<Omit<JobRecord, 'steps'>>): void {
    Object.assign(this.job, changes);
    for (const key in changes) this.changedFields.add(key as keyof JobRecord);
    this.changed = true;
  }

  ignore(reason: string): void {
    this.ignored ??= reason;
  }

  reject(code: Rejection['code'], message: string): void {
    this.rejected = { code, message };
  }
}
