import type { FanOutTask } from '../definition/compile.js';
import { hasOwn, type Json, type JsonObject, setOwn } from '../json.js';

/** What fan-in needs of one child: its place in the list, its element, and its result. */
export interface GatheredChild {
  index: number;
  input: JsonObject;
  result?: JsonObject;
  /** A failed child of a `continueOnError` step: its entry in the list is `{"error": …}`. */
  error?: JsonObject;
}

/**
 * Fan-in, fed children in pages (any page order). When every child has completed, the step's output
 * is: for each key other than `itemKey`, the value from the first child, in list order, whose result
 * has it; plus `<itemListKey>: [...]`, where entry i is child i's result under `itemKey`, or the
 * original element i when the child's result lacks that key. Length and order match the input list.
 */
export class ChildGatherer {
  private readonly items: Json[];
  /** 1 for each index gathered: a byte an element (a boolean array holds 8 on Node's 64-bit V8). */
  private readonly seen: Uint8Array;
  private readonly firstOwner = new Map<string, { index: number; position: number; value: Json }>();
  private count = 0;

  constructor(
    private readonly task: FanOutTask,
    readonly total: number,
  ) {
    this.items = new Array<Json>(total).fill(null);
    this.seen = new Uint8Array(total);
  }

  add(children: Iterable<GatheredChild>): void {
    for (const child of children) {
      if (child.index < 0 || child.index >= this.total || this.seen[child.index] === 1) continue;
      this.seen[child.index] = 1;
      this.count++;
      if (child.error) {
        this.items[child.index] = { error: child.error };
        continue;
      }
      const result = child.result ?? {};
      this.items[child.index] = hasOwn(result, this.task.itemKey)
        ? (result[this.task.itemKey] as Json)
        : (child.input[this.task.itemKey] ?? null);
      Object.keys(result).forEach((key, position) => {
        if (key === this.task.itemKey) return;
        const owner = this.firstOwner.get(key);
        if (!owner || owner.index > child.index) {
          this.firstOwner.set(key, { index: child.index, position, value: result[key] as Json });
        }
      });
    }
  }

  get complete(): boolean {
    return this.count === this.total;
  }

  get missing(): number {
    return this.total - this.count;
  }

  output(): JsonObject {
    if (!this.complete)
      throw new Error(`fan-in of task ${this.task.name}: ${this.missing} of ${this.total} children missing`);
    const output: JsonObject = {};
    const keys = [...this.firstOwner].sort(([, a], [, b]) => a.index - b.index || a.position - b.position);
    for (const [key, { value }] of keys) setOwn(output, key, value);
    setOwn(output, this.task.itemListKey, this.items);
    return output;
  }
}

/** Fan-in of a complete list of children, in one call. */
export function gatherChildren(task: FanOutTask, children: readonly GatheredChild[]): JsonObject {
  const gatherer = new ChildGatherer(task, children.length);
  gatherer.add(children);
  return gatherer.output();
}
