import { describe, expect, it } from 'vitest';
import { childIds } from '../../../engine/job/fan-out.js';
import { derivedChildId } from '../../../engine/job/uuid-v5.js';

const PARENT = '5d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a';
const OWN = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const derived = (index: number) => derivedChildId(PARENT, 'fan', index);

describe('childIds', () => {
  it("takes a unique element id; a repeated one, and one naming a sibling's derived id, fall back", () => {
    const items = [{ id: OWN }, { id: OWN.toUpperCase() }, { id: derived(3) }, 'plain'];
    expect(childIds(PARENT, 'fan', items)).toEqual([OWN, derived(1), derived(2), derived(3)]);
  });

  it('names the same ids for a later slice as for the whole list', () => {
    const items = [{ id: OWN }, { id: derived(0) }, 'x', { id: OWN }];
    const whole = childIds(PARENT, 'fan', items);
    expect(childIds(PARENT, 'fan', items, new Set(), 2, 4)).toEqual(whole.slice(2));
    expect(new Set(whole).size).toBe(4);
  });

  it('derives a taken derived id again from the seed: the same seed, the same id', () => {
    const taken = new Set([derived(1)]);
    const once = childIds(PARENT, 'fan', ['a', 'b', 'c'], taken, 0, 3, 'seed-1');
    expect(once[0]).toBe(derived(0));
    expect(once[2]).toBe(derived(2));
    expect(once[1]).not.toBe(derived(1));
    expect(childIds(PARENT, 'fan', ['a', 'b', 'c'], taken, 0, 3, 'seed-1')).toEqual(once);
    expect(childIds(PARENT, 'fan', ['a', 'b', 'c'], taken, 0, 3, 'seed-2')[1]).not.toBe(once[1]);
  });

  it('gives a taken element id its derived id, or a seeded one when that is taken too', () => {
    const items = [{ id: OWN }, 'b'];
    expect(childIds(PARENT, 'fan', items, new Set([OWN]), 0, 2, 's')).toEqual([derived(0), derived(1)]);
    const both = childIds(PARENT, 'fan', items, new Set([OWN, derived(0)]), 0, 2, 's');
    expect(both[0]).not.toBe(OWN);
    expect(both[0]).not.toBe(derived(0));
    expect(both[1]).toBe(derived(1));
  });
});
