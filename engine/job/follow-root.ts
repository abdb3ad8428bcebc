import type { Draft } from './draft.js';
import { pauseJob } from './pause.js';
import { cancelJob } from './steps.js';
import { heldByRoot } from './tree-growth.js';
import { isFinished } from './types.js';

/**
 * Before an event, a job of a tree whose root is paused or has ended (as read after a commit that
 * would have grown the tree was refused: tree-quota.ts) follows its root, as the root's cascade
 * would have it when it came down: a running job pauses, and then takes its event as a paused job
 * does (nothing new is dispatched); a job not finished is cancelled. A new job (a called one) is
 * not created under a root that has ended, and starts paused under a paused one (`startJob`).
 */
export function followRoot(d: Draft, creating: boolean): void {
  const held = heldByRoot(d);
  if (held === undefined) return;
  if (creating) {
    if (held === 'ended') {
      const tree = d.context.tree;
      d.reject(
        'conflict',
        `job ${d.job.treeRoot}, the root of its tree, has ended (${tree?.rootStatus ?? 'deleted'}): the tree takes no new jobs`,
      );
    }
    return;
  }
  if (held === 'paused' && d.job.status === 'running') pauseJob(d);
  else if (held === 'ended' && !isFinished(d.job.status)) cancelJob(d);
}
