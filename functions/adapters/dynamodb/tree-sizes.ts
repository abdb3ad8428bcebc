import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import {
  type JobStatus,
  type RootState,
  rootStatusesOf,
  type TreeChange,
  type TreeState,
} from '../../../engine/index.js';
import { keys, N, num, S, str } from './items.js';
import { type DynamoDbTable, type Key, keyOf } from './table.js';

// Bounded job trees (engine/job/tree-quota.ts): the jobs counted under a tree's root are the item
// `JOB#<root>`/`D` (`n`), in the root's own partition, so that retention deletes it with the root.
// See README.md, "Bounded job trees".

const sizeKey = (root: string): Key => keyOf(keys.jobPk(root), 'D');

/**
 * The writes of a tree change, for the committing job's own transaction, each conditional as
 * `treeChangeAllowed` says (a refused one cancels the whole commit): the root's head in the state the
 * commit rests on (not for the root's own commit, whose head the transaction writes under its
 * revision), and the count added while it stays within the quota. A change larger than its quota
 * alone is never allowed: the caller refuses it before writing (`refusedAlone`).
 */
export function treeWrites(change: TreeChange, jobId: string): TransactWriteItem[] {
  const writes: TransactWriteItem[] = [];
  if (change.root !== jobId) writes.push(rootCheck(change.root, change.rootState));
  if (change.add > 0) {
    writes.push({
      Update: {
        TableName: undefined,
        Key: sizeKey(change.root),
        UpdateExpression: 'ADD #n :add',
        ConditionExpression: 'attribute_not_exists(#n) OR #n <= :room',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':add': N(change.add), ':room': N(change.max - change.add) },
      },
    });
  }
  return writes;
}

/** A change that no tree could take: more jobs than its quota holds. */
export function refusedAlone(change: TreeChange): boolean {
  return change.add > change.max;
}

/** The root's head holds a status of `state` (an ended root may be gone: deleted by retention). */
function rootCheck(root: string, state: RootState): TransactWriteItem {
  const statuses = rootStatusesOf(state);
  const values = Object.fromEntries(statuses.map((status, n) => [`:s${n}`, S(status)]));
  const listed = `#st IN (${Object.keys(values).join(', ')})`;
  return {
    ConditionCheck: {
      TableName: undefined,
      Key: keys.head(root),
      ConditionExpression: state === 'ended' ? `attribute_not_exists(pk) OR ${listed}` : listed,
      ExpressionAttributeNames: { '#st': 'st' },
      ExpressionAttributeValues: values,
    },
  };
}

/** The tree's count and its root's status, strongly consistent (the root's head holds it as `st`). */
export async function readTree(table: DynamoDbTable, root: string): Promise<TreeState> {
  const [size, head] = await Promise.all([table.get(sizeKey(root)), table.get(keys.head(root))]);
  return { size: num(size, 'n') ?? 0, rootStatus: str(head, 'st') as JobStatus | undefined };
}
