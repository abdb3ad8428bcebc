import { isFinished, JOB_STATUSES, type JobRecord, type JobStatus } from './types.js';

/*
 * Bounded job trees (docs/workflows.md, "How many jobs one start may make").
 *
 * A top-level job started from outside (the API, a schedule, an `onFailure` workflow) is the root of
 * a tree: the children of its fan-outs, the jobs its `workflow:` steps call, and theirs in turn, at
 * any depth. A called job is top-level (its own `root`), but it belongs to its caller's tree
 * (`treeRoot`). The 16-deep call limit bounds a chain; this bounds the tree.
 *
 * A store keeps, per root, how many jobs the tree holds under it (`size`). A commit that adds to it
 * carries a `TreeChange`, written only if its condition holds, with what the commit creates:
 * - the tree stays within its quota (`maxTreeJobs`, a setting of the manager): size + add <= max;
 * - the root is still as the decision saw it: open (neither paused nor ended) for a commit that
 *   creates jobs, unless the commit is the root's own (its revision condition holds its status).
 * So a root that is paused, cancelled or has ended refuses new jobs in its tree at once, at every
 * depth, before its cascade (follow-ups, level by level) reaches them.
 *
 * - A fan-out counts all its children when it starts: a large one created slice by slice adds
 *   nothing with its later slices, so it fits whole or fails at once. A retried fan-out keeps its
 *   children and counts nothing.
 * - A `workflow:` step counts its called job with the attempt that starts it (each retry's job is a
 *   new one, counted again). The called job's own creation commit creates it under the root's
 *   condition.
 * - Over the quota, the step that would create them fails (like any step: `continueOnError` handles
 *   it), naming the quota and the root. Nothing counted is ever given back.
 * - A job whose commit was refused because its root is paused or ended follows its root at once:
 *   paused (a job starting then starts paused), or cancelled (a called job is then not created), as
 *   the cascade would have it. That commit rests on the root still being so.
 * - `onFailure` jobs are roots of trees of their own.
 */

/** The most jobs a tree holds under its root: 10 × the largest fan-out a manager takes by default. */
export const DEFAULT_MAX_TREE_JOBS = 1_000_000;

/** A tree as a store keeps it: the jobs counted under its root, and the root's status (undefined: gone). */
export interface TreeState {
  size: number;
  rootStatus: JobStatus | undefined;
}

/** What a tree's root allows: new jobs (`open`), none while `paused`, none again once `ended`. */
export type RootState = 'open' | 'paused' | 'ended';

/** A root deleted by retention had ended. */
export function rootStateOf(status: JobStatus | undefined): RootState {
  if (status === undefined || isFinished(status)) return 'ended';
  return status === 'paused' ? 'paused' : 'open';
}

/** The statuses of a root in each state (a store that cannot call `rootStateOf` in its condition lists them). */
export function rootStatusesOf(state: RootState): JobStatus[] {
  return JOB_STATUSES.filter((status) => rootStateOf(status) === state);
}

/**
 * What a commit adds to its tree (`add` jobs, under the quota `max`) and the state of the root it
 * rests on; a store writes the commit only if `treeChangeAllowed` holds.
 */
export interface TreeChange {
  root: string;
  add: number;
  max: number;
  rootState: RootState;
}

/** The root of the tree a job belongs to: its caller's (through `treeRoot`), or its own top-level job. */
export function treeRootOf(job: Pick<JobRecord, 'root' | 'treeRoot'>): string {
  return job.treeRoot ?? job.root;
}

/**
 * Whether a store may write a commit of job `jobId` carrying `change`, its tree being `tree`: the
 * root is as the commit saw it (not checked for the root's own commits), and the tree stays within
 * its quota.
 */
export function treeChangeAllowed(tree: TreeState, change: TreeChange, jobId: string): boolean {
  if (change.root !== jobId && rootStateOf(tree.rootStatus) !== change.rootState) return false;
  return change.add === 0 || tree.size + change.add <= change.max;
}

/** Why `adding` more jobs do not fit a tree of `size` under `max`; undefined when they do. */
export function quotaRefusal(root: string, size: number, adding: number, max: number): string | undefined {
  if (size + adding <= max) return undefined;
  return (
    `the tree of job ${root} would hold ${size + adding} jobs under its root (${adding} more), ` +
    `over its quota of ${max} (a setting of the manager: serve --max-tree-jobs, deployed MAX_TREE_JOBS)`
  );
}

/** What a transition did to its job's tree, to decide its `TreeChange`. */
export interface TreeGrowth {
  /** The job as the transition leaves it. */
  job: Pick<JobRecord, 'id' | 'root' | 'treeRoot'>;
  /** The job is new (its first commit). */
  created: boolean;
  /** Jobs counted against the tree (fan-outs started, calls made). */
  add: number;
  /** The commit creates jobs (children), counted now or when their fan-out started. */
  createsJobs: boolean;
  /** The job followed its root's state (paused or cancelled because of it). */
  followedRoot: boolean;
  /** The root's state as read for the decision; unread: taken as open. */
  rootState: RootState;
  max: number;
}

/**
 * The tree change a transition's commit carries, if any: the root's own commit only when it counts
 * jobs; a descendant's when it counts or creates jobs, is new (a called job), or followed its root.
 */
export function treeChangeOf(growth: TreeGrowth): TreeChange | undefined {
  const root = treeRootOf(growth.job);
  const { add, max } = growth;
  if (root === growth.job.id) return add > 0 ? { root, add, max, rootState: 'open' } : undefined;
  if (growth.followedRoot) return { root, add, max, rootState: growth.rootState };
  if (add > 0 || growth.createsJobs || growth.created) return { root, add, max, rootState: 'open' };
  return undefined;
}
