import { describe, expect, it } from 'vitest';
import { ChildGatherer, type FanOutTask, gatherChildren } from '../../../engine/index.js';

const TASK: FanOutTask = {
  name: 't',
  itemListKey: 'sections',
  itemKey: 'section',
  concurrency: Number.POSITIVE_INFINITY,
};

describe('Class: ChildGatherer', () => {
  it('gives the same output whatever order the pages come in', () => {
    const children = Array.from({ length: 10 }, (_, index) => ({
      index,
      input: { section: index },
      result: { section: index * 2, [`k${index % 3}`]: index },
    }));
    const inOrder = gatherChildren(TASK, children);
    const gatherer = new ChildGatherer(TASK, 10);
    gatherer.add(children.slice(6));
    expect(gatherer.complete).toBe(false);
    gatherer.add(children.slice(0, 3));
    gatherer.add(children.slice(3, 6));
    expect(gatherer.output()).toEqual(inOrder);
    expect(JSON.stringify(gatherer.output())).toBe(JSON.stringify(inOrder));
    expect(inOrder).toEqual({ k0: 0, k1: 1, k2: 2, sections: [0, 2, 4, 6, 8, 10, 12, 14, 16, 18] });
  });

  it('counts a child once, however often it is added', () => {
    const gatherer = new ChildGatherer(TASK, 2);
    const child = { index: 0, input: { section: 'a' }, result: {} };
    gatherer.add([child, child]);
    expect(gatherer.missing).toBe(1);
    expect(() => gatherer.output()).toThrow('1 of 2 children missing');
  });

  it('never pollutes prototypes through child results', () => {
    const output = gatherChildren(TASK, [
      { index: 0, input: { section: 1 }, result: JSON.parse('{"__proto__": {"x": 1}}') },
    ]);
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(Object.keys(output)).toEqual(['__proto__', 'sections']);
  });
});
