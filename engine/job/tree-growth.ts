import type { Draft } from './draft.js';
import { treeCountOf } from './transition.js';
import {
  DEFAULT_MAX_TREE_JOBS,
  quotaRefusal,
  type RootState,
  rootStateOf,
  treeRootOf,
} from './tree-quota.js';

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
