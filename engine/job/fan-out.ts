import type { FanOutTask } from '../definition/compile.js';
import {
  copyWithout,
  describeJsonType,
  hasOwn,
  isJsonObject,
  type Json,
  type JsonObject,
  setOwn,
} from '../json.js';
import { isUuid } from './types.js';
import { derivedChildId } from './uuid-v5.js';

/** The list a fan-out step runs over, or why there is none. */
export type FanOutList = { ok: true; items: readonly Json[] } | { ok: false; error: string };

/**
 * The input's `itemListKey` value must be a list; `null` counts as an empty one. Missing, or not a
 * list: an error that names the key and the type found.
 */
export function fanOutList(input: JsonObject, task: FanOutTask): FanOutList {
  if (!hasOwn(input, task.itemListKey)) {
    return {
      ok: false,
      error: `task "${task.name}" fans out over "${task.itemListKey}", but the input has no such key`,
    };
  }
  const value = input[task.itemListKey];
  if (value === null) return { ok: true, items: [] };
  if (!Array.isArray(value)) {
    return {
      ok: false,
      error: `task "${task.name}" fans out over "${task.itemListKey}", which must be a list, got ${describeJsonType(value)}`,
    };
  }
  return { ok: true, items: value };
}

/**
 * What a fan-out's children are given, all together: the shared input once per child plus the
 * elements. Over `maxBytes`, why (with what to do); else undefined. JSON text length stands in for
 * bytes: it is what is stored and sent, give or take non-ASCII characters.
 */
export function fanOutTooLarge(
  base: JsonObject,
  items: readonly Json[],
  maxBytes: number,
): string | undefined {
  const shared = JSON.stringify(base).length;
  const total = items.length * shared + JSON.stringify(items).length;
  if (total <= maxBytes) return undefined;
  const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return (
    `the fan-out would give its ${items.length} children ${mb(total)} of input (${shared} bytes each besides its element); ` +
    `a fan-out may give at most ${mb(maxBytes)}: map the step's input with "input:" to give the children only what they need`
  );
}

/** An empty list completes the step at once: its output is its input with `<itemListKey>: []`. */
export function emptyFanOutOutput(input: JsonObject, task: FanOutTask): JsonObject {
  const output = copyWithout(input);
  setOwn(output, task.itemListKey, []);
  return output;
}

/** What every child's input shares: the step's input without `itemListKey`. */
export function childInputBase(input: JsonObject, task: FanOutTask): JsonObject {
  return copyWithout(input, task.itemListKey);
}

/** Child i receives a copy of the step's input without `itemListKey`, plus `<itemKey>: element i`. */
export function childInput(base: JsonObject, task: FanOutTask, item: Json): JsonObject {
  const childInput = copyWithout(base);
  setOwn(childInput, task.itemKey, item);
  return childInput;
}

/**
 * Child job ids of the elements `from` to `to` (excluded): the element's `id` when it is an object
 * whose `id` is a UUID that no other job, earlier element or sibling's derived id uses; otherwise a
 * UUID derived from the parent job id, the step name and the index, so that re-running a transition
 * never creates different children. A derived id that another job holds (`takenIds`: a caller
 * started a job under it) is derived again with `seed`, which the manager draws at random, so that
 * no caller can hold that one in advance.
 *
 * Elements before `from` (children of earlier slices) count only through the element ids they
 * claimed. Every index's derived id is reserved for its own index (an element that names a later
 * sibling's would otherwise take it from that sibling).
 */
export function childIds(
  parentId: string,
  step: string,
  items: readonly Json[],
  takenIds: ReadonlySet<string> = new Set(),
  from = 0,
  to = items.length,
  seed?: string,
): string[] {
  const derived = derivedIdsIfClaimable(parentId, step, items, to);
  const derivedIds = new Set(derived);
  const used = new Set<string>([parentId]);
  const ids: string[] = [];
  for (let index = 0; index < to; index++) {
    const own = elementId(items[index] as Json);
    const claims = own !== undefined && !used.has(own) && !takenIds.has(own) && !derivedIds.has(own);
    if (claims) used.add(own);
    if (index < from) continue;
    let id = claims ? own : (derived[index] ?? derivedChildId(parentId, step, index));
    if (!claims && seed !== undefined && takenIds.has(id)) id = derivedChildId(parentId, step, index, seed);
    used.add(id);
    ids.push(id);
  }
  return ids;
}

const elementId = (item: Json): string | undefined =>
  isJsonObject(item) && isUuid(item.id) ? item.id.toLowerCase() : undefined;

/**
 * Every index's derived id, when an element up to `to` (whose claims are decided now) brings an id
 * that could be one (else none): derived ids are version 5 UUIDs, so elements with random (version
 * 4) ids cost no hashing.
 */
function derivedIdsIfClaimable(parentId: string, step: string, items: readonly Json[], to: number): string[] {
  let claimable = false;
  for (let index = 0; index < to && !claimable; index++)
    claimable = elementId(items[index] as Json)?.[14] === '5';
  if (!claimable) return [];
  return items.map((_, index) => derivedChildId(parentId, step, index));
}
