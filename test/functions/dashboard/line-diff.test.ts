import { describe, expect, it } from 'vitest';
import {
  definitionText,
  diffHunks,
  diffStats,
  lineDiff,
} from '../../../functions/dashboard/src/line-diff.js';

const text = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('Function: lineDiff', () => {
  it('keeps the common lines and marks the rest added or removed, with both line numbers', () => {
    const diff = lineDiff(text('a', 'b', 'c', 'd'), text('a', 'c', 'x', 'd'));
    expect(diff).toEqual([
      { kind: 'same', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'removed', text: 'b', oldLine: 2 },
      { kind: 'same', text: 'c', oldLine: 3, newLine: 2 },
      { kind: 'added', text: 'x', newLine: 3 },
      { kind: 'same', text: 'd', oldLine: 4, newLine: 4 },
    ]);
  });

  it('reads identical texts as unchanged and an empty text as all added', () => {
    expect(diffStats(lineDiff(text('a', 'b'), text('a', 'b')))).toEqual({ added: 0, removed: 0 });
    expect(lineDiff('', text('a', 'b')).map((line) => line.kind)).toEqual(['added', 'added']);
    expect(lineDiff(text('a'), '').map((line) => line.kind)).toEqual(['removed']);
  });

  it('finds the longest common run, not the first match', () => {
    const diff = lineDiff(text('x', 'a', 'b', 'c'), text('a', 'b', 'c', 'x'));
    expect(diff.filter((line) => line.kind === 'same').map((line) => line.text)).toEqual(['a', 'b', 'c']);
    expect(diffStats(diff)).toEqual({ added: 1, removed: 1 });
  });

  it('compares two versions of a definition: the step added shows as added lines', () => {
    const v1 = { name: 'w', steps: [{ name: 'a' }] };
    const v2 = { name: 'w', steps: [{ name: 'a' }, { name: 'b', depends: ['a'] }] };
    const diff = lineDiff(definitionText(v1), definitionText(v2));
    const added = diff.filter((line) => line.kind === 'added').map((line) => line.text.trim());
    expect(added).toContain('"name": "b",');
    expect(diffStats(diff).removed).toBeLessThanOrEqual(1);
  });
});

describe('Function: diffHunks', () => {
  it('keeps `context` unchanged lines around each change and counts the lines left out', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`);
    const after = [...before];
    after[10] = 'changed';
    const hunks = diffHunks(lineDiff(text(...before), text(...after)), 2);
    expect(hunks).toHaveLength(1);
    expect(hunks[0]?.skipped).toBe(8);
    expect(hunks[0]?.lines.map((line) => line.text)).toEqual([
      'line 8',
      'line 9',
      'line 10',
      'changed',
      'line 11',
      'line 12',
    ]);
  });

  it('splits far apart changes into hunks, and gives none for no change', () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const after = [...before];
    after[2] = 'first';
    after[25] = 'second';
    const hunks = diffHunks(lineDiff(text(...before), text(...after)), 3);
    expect(hunks).toHaveLength(2);
    expect(hunks[0]?.skipped).toBe(0);
    expect(hunks[1]?.skipped).toBeGreaterThan(0);
    expect(diffHunks(lineDiff(text(...before), text(...before)))).toEqual([]);
  });
});
