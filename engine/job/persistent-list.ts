// A 32-way trie: leaves hold 32 values, inner nodes 32 children. Replacing one value copies the
// nodes on its path (two arrays of at most 32 for a list of up to 1,024) and shares the rest with
// the list it came from. Immutable.js's List does this and much more, at some 60 KB in every
// function's bundle; a job's steps need only a fixed length, `get` and `with`.
const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
// Up to this many values, one flat array: copying it once per transition costs less than walking
// and copying a path of the trie.
const FLAT_MAX = 128;

type Node = unknown[];

/**
 * Work in progress on lists derived from one another, such as the steps of one transition: the
 * nodes it copied belong to it, so a second change under the same node changes that copy in place
 * rather than copying it again. A list made before the edit began is never changed.
 */
export class ListEdit {
  /** A handful of nodes in the usual transition, so a list beats a set's hashing. */
  readonly owned: Node[] = [];
}

/**
 * A fixed-length list whose `with` returns a new list sharing all but one path with this one (a
 * job's step states, so that a transition costs the same whatever the size of its workflow). Its
 * JSON is an array.
 */
export class PersistentList<T> implements Iterable<T> {
  private constructor(
    private readonly root: Node,
    /** How far an index is shifted for its slot in the root: 0 when the root holds every value. */
    private readonly shift: number,
    readonly length: number,
  ) {}

  static of<T>(values: readonly T[]): PersistentList<T> {
    return PersistentList.taking(values.slice());
  }

  /** A list of `values`, which it takes as its own: the caller never changes them again. */
  static taking<T>(values: T[]): PersistentList<T> {
    if (values.length <= FLAT_MAX) return new PersistentList<T>(values, 0, values.length);
    let nodes: Node[] = chunks(values);
    let shift = 0;
    while (nodes.length > 1) {
      nodes = chunks(nodes);
      shift += BITS;
    }
    return new PersistentList<T>(nodes[0] ?? [], shift, values.length);
  }

  get(index: number): T | undefined {
    // A flat array has nothing at a negative, fractional or too large index: no check needed.
    if (this.shift === 0) return this.root[index] as T | undefined;
    if (!(Number.isInteger(index) && index >= 0 && index < this.length)) return undefined;
    let node = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(index >>> level) & MASK] as Node;
    return node[index & MASK] as T;
  }

  /**
   * This list with the value at `index` replaced. With `edit`, the nodes it copied before are
   * changed in place, and so is a list it made before.
   */
  with(index: number, value: T, edit?: ListEdit): PersistentList<T> {
    if (!(Number.isInteger(index) && index >= 0 && index < this.length)) {
      throw new RangeError(`index ${index} is outside a list of ${this.length}`);
    }
    let root: Node;
    if (this.shift > 0) root = replaced(this.root, this.shift, index, value, edit);
    else {
      root = owned(this.root, edit);
      root[index] = value;
    }
    // A root the edit had copied before was changed in place: so was this list, made by the same edit.
    return root === this.root ? this : new PersistentList<T>(root, this.shift, this.length);
  }

  [Symbol.iterator](): Iterator<T> {
    return this.toArray()[Symbol.iterator]();
  }

  find(predicate: (value: T) => boolean): T | undefined {
    const index = this.findIndex(predicate);
    return index < 0 ? undefined : this.get(index);
  }

  some(predicate: (value: T) => boolean): boolean {
    return this.findIndex(predicate) >= 0;
  }

  findIndex(predicate: (value: T) => boolean): number {
    for (let index = 0; index < this.length; index++) if (predicate(this.get(index) as T)) return index;
    return -1;
  }

  map<U>(project: (value: T, index: number) => U): U[] {
    return this.toArray().map(project);
  }

  toArray(): T[] {
    const values: T[] = [];
    collect(this.root, this.shift, values);
    return values;
  }

  toJSON(): T[] {
    return this.toArray();
  }
}

function chunks(items: readonly unknown[]): Node[] {
  const nodes: Node[] = [];
  for (let start = 0; start < items.length; start += WIDTH) nodes.push(items.slice(start, start + WIDTH));
  return nodes;
}

/** `node` itself when `edit` copied it, else a copy (that `edit` then owns). */
function owned(node: Node, edit: ListEdit | undefined): Node {
  if (edit?.owned.includes(node)) return node;
  const copy = node.slice();
  edit?.owned.push(copy);
  return copy;
}

function replaced(node: Node, shift: number, index: number, value: unknown, edit?: ListEdit): Node {
  const copy = owned(node, edit);
  const slot = (index >>> shift) & MASK;
  copy[slot] = shift === 0 ? value : replaced(node[slot] as Node, shift - BITS, index, value, edit);
  return copy;
}

function collect(node: Node, shift: number, into: unknown[]): void {
  if (shift === 0) {
    // A leaf, or the one flat array of a short list.
    for (const value of node) into.push(value);
    return;
  }
  for (const child of node) collect(child as Node, shift - BITS, into);
}
