import type { Draft } from './draft.js';
import type { EngineContext } from './events.js';
import { treeCountOf } from './transition.js';
import {
  DEFAULT_MAX_TREE_JOBS,
  quotaRefusal,
  type RootState,
  rootStateOf,
  treeRootOf,
} from './tree-quota.js';
import type { JobRecord } from './types.js';

/**
 * Counts `jobs` more against the job's tree (a fan-out's children, a called job) when they fit its
 * quota (tree-quota.ts); else returns why not, and counts nothing. The tree's size is the one read for
 * this transition (none read: 0, and the store's condition decides) plus what it counted so far.
 */
export function countTreeJobs(d: Draft, jobs: number): string | undefined {
  const counted = treeCountOf(d.effects);
  const size = (d.context.tree?.size ?? 0) + counted;
  const refusal = quotaRefusal(treeRootOf(d.job), size, jobs, d.context.maxTreeJobs ?? DEFAULT_MAX_TREE_JOBS);
  if (refusal) return refusal;
  d.effects.treeCounted.push(counted + jobs);
  return undefined;
}

/**
 * Whether a job that is to run (start, or resume) holds back because its tree's root, as read for this
 * transition, is paused or has ended: then the job follows it (tree-quota.ts), and its commit rests on
 * the root still being so. Undefined: the root is open, unread, or the job itself.
 */
export function heldByRoot(d: Draft): Exclude<RootState, 'open'> | undefined {
  const tree = d.context.tree;
  if (!tree || treeRootOf(d.job) === d.job.id) return undefined;
  const state = rootStateOf(tree.rootStatus);
  if (state === 'open') return undefined;
  d.followedRoot = true;
  return state;
}

/**
 * The context of a transition of `job`: for a root's own transition, the tree as read, but the root
 * as this transition leaves it (the jobs it starts see it running, as it is when it starts them),
 * rather than as stored before it.
 */
export function contextOf(
  context: EngineContext,
  job: Pick<JobRecord, 'id' | 'root' | 'treeRoot'>,
): EngineContext {
  if (!context.tree || treeRootOf(job) !== job.id) return context;
  return { ...context, tree: { ...context.tree, rootStatus: 'running' } };
}
