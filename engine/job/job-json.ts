import { PersistentList } from './persistent-list.js';
import type { JobRecord } from './types.js';

/**
 * A record's JSON and the text of each of its parts, for a store to keep beside the record it wrote
 * so that the next revision's text is built from it: a transition copies only what it changes, and
 * the rest of the new record is the same objects, whose text is already here.
 */
export interface JobRecordText {
  readonly job: JobRecord;
  readonly json: string;
  /** Absent for a short record, which is written whole each time. */
  readonly fields?: ReadonlyMap<string, FieldText>;
}

/** The text of one field of a record. */
export interface FieldText {
  value: unknown;
  /** The value's text; for `steps` and `history`, the text of each item instead. */
  json?: string;
  items?: readonly unknown[];
  itemTexts?: string[];
}

const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    // The record's own field names, and a few more at most: bounded all the same.
    if (quotedKeys.size < 256) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** The items of a job's steps (a PersistentList, whose JSON is its array) or history. */
function itemsOf(value: unknown): readonly unknown[] | undefined {
  if (Array.isArray(value)) return value;
  return value instanceof PersistentList ? value.toArray() : undefined;
}

/**
 * Below this many states and entries, `JSON.stringify` of the whole record costs less than
 * building it from its parts and keeping them (a diamond's record: 1.8 KB).
 */
const PARTS_FROM = 24;

/** How far ahead in the previous items an item is looked for once the two arrays stop matching. */
const RESYNC_WINDOW = 64;

/**
 * The text of each item, taken from the previous revision's where the item is the same object:
 * compared in order, and looked for a little further on where they stop matching (the history,
 * whose oldest entries after the first are cut as new ones come).
 */
function itemTextsOf(items: readonly unknown[], old: FieldText | undefined): string[] {
  const oldItems = old?.items;
  const oldTexts = old?.itemTexts;
  const itemTexts = new Array<string>(items.length);
  let shift = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (oldItems && oldTexts) {
      let j = i + shift;
      if (oldItems[j] !== item) {
        // A new item (a changed state) is not there: looking no further than the window keeps each
        // one's cost bounded, whatever the length of the list.
        const end = Math.min(oldItems.length, j + 1 + RESYNC_WINDOW);
        for (let k = j + 1; k < end; k++) {
          if (oldItems[k] !== item) continue;
          shift = k - i;
          j = k;
          break;
        }
      }
      if (j < oldItems.length && oldItems[j] === item) {
        itemTexts[i] = oldTexts[j] as string;
        continue;
      }
    }
    // JSON.stringify writes `null` for an item that has no JSON.
    itemTexts[i] = JSON.stringify(item) ?? 'null';
  }
  return itemTexts;
}

/**
 * `JSON.stringify(job)`, byte for byte, with the text of its parts, for stores that write a job's
 * whole record at each change. Given the text of the revision it follows (`previous`), the text of
 * every field, step state and history entry that is the same object in both is taken from there
 * instead of written again: a step of a 100-step chain writes the text of the one or two states and
 * the few entries it changed, not of all 100 states and 200 entries.
 */
export function jobRecordText(job: JobRecord, previous?: JobRecordText): JobRecordText {
  if (job.steps.length + (job.history?.length ?? 0) < PARTS_FROM) return { job, json: JSON.stringify(job) };
  const fields = new Map<string, FieldText>();
  // One join at the end: each piece of text is copied once.
  const pieces: string[] = [];
  for (const key of Object.keys(job)) {
    const value = job[key as keyof JobRecord];
    const old = previous?.fields?.get(key);
    const items = key === 'steps' || key === 'history' ? itemsOf(value) : undefined;
    if (items) {
      const itemTexts = itemTextsOf(items, old);
      fields.set(key, { value, items, itemTexts });
      pieces.push(pieces.length ? ',' : '{', quotedKey(key), '[');
      for (let i = 0; i < itemTexts.length; i++) pieces.push(i ? ',' : '', itemTexts[i] as string);
      pieces.push(']');
      continue;
    }
    let json =
      old && old.value === value && typeof value === 'object' && value !== null ? old.json : undefined;
    json ??= JSON.stringify(value);
    // JSON.stringify leaves out a key whose value has no JSON (undefined, a function).
    if (json === undefined) continue;
    fields.set(key, { value, json });
    pieces.push(pieces.length ? ',' : '{', quotedKey(key), json);
  }
  pieces.push(pieces.length ? '}' : '{}');
  return { job, json: pieces.join(''), fields };
}
