import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListEdit, PersistentList } from '../../../engine/job/persistent-list.js';

const range = (length: number): number[] => Array.from({ length }, (_, i) => i);

describe('PersistentList', () => {
  it.each([0, 1, 31, 32, 33, 1_024, 1_025, 40_000])(
    'holds %i values in order, as its JSON does',
    (length) => {
      const values = range(length);
      const list = PersistentList.of(values);
      expect(list.length).toBe(length);
      expect([...list]).toEqual(values);
      expect(JSON.stringify(list)).toBe(JSON.stringify(values));
      expect(list.get(length - 1)).toBe(values[length - 1]);
    },
  );

  it('has nothing outside its indexes, and refuses to replace there', () => {
    const list = PersistentList.of(['a', 'b', 'c']);
    for (const index of [-1, 3, 1.5, Number.NaN]) {
      expect(list.get(index)).toBeUndefined();
      expect(() => list.with(index, 'x')).toThrow(RangeError);
    }
  });

  it('leaves the list it came from as it was', () => {
    const before = PersistentList.of(range(100));
    const after = before.with(70, -1).with(3, -2);
    expect(before.toArray()).toEqual(range(100));
    expect(after.get(70)).toBe(-1);
    expect(after.get(3)).toBe(-2);
    expect(after.find((value) => value < 0)).toBe(-2);
    expect(after.findIndex((value) => value === -1)).toBe(70);
    expect(after.some((value) => value === -1)).toBe(true);
    expect(before.some((value) => value < 0)).toBe(false);
    expect(before.find((value) => value < 0)).toBeUndefined();
  });

  it('behaves as an array copied at each change, with or without an edit, and never changes a list made before the edit', () => {
    const change = fc.record({ at: fc.nat(), value: fc.integer(), editing: fc.boolean() });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2_100 }),
        fc.array(change, { maxLength: 60 }),
        (length, changes) => {
          const first = PersistentList.of(range(length));
          let model = range(length);
          let list = first;
          const snapshots: [PersistentList<number>, number[]][] = [[first, model]];
          let edit = new ListEdit();
          for (const { at, value, editing } of changes) {
            const index = at % length;
            model = model.slice();
            model[index] = value;
            if (editing) list = list.with(index, value, edit);
            else {
              // A change outside the edit ends it: what came before is a snapshot from now on.
              list = list.with(index, value);
              edit = new ListEdit();
              snapshots.push([list, model]);
            }
            expect(list.get(index)).toBe(value);
          }
          expect(list.toArray()).toEqual(model);
          for (const [snapshot, expected] of snapshots) expect(snapshot.toArray()).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
