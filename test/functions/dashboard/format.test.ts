import { describe, expect, it } from 'vitest';
import {
  absoluteTime,
  elapsedBetween,
  formatDuration,
  lastChange,
  plural,
  relativeTime,
  shortId,
} from '../../../functions/dashboard/src/format.js';

const NOW = Date.parse('2024-05-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('Function: relativeTime', () => {
  it.each([
    [2_000, 'just now'],
    [12_000, '12 s ago'],
    [5 * 60_000 + 30_000, '5 min ago'],
    [3 * 3_600_000 + 1, '3 h ago'],
    [2 * 86_400_000 + 5, '2 d ago'],
    [-40_000, 'in 40 s'],
  ])('%d ms before now reads "%s"', (delta, expected) => {
    expect(relativeTime(ago(delta), NOW)).toBe(expected);
  });

  it('reads a dash for a missing or malformed time', () => {
    expect(relativeTime(undefined, NOW)).toBe('—');
    expect(relativeTime('yesterday', NOW)).toBe('—');
  });
});

describe('Function: formatDuration', () => {
  it.each([
    [850, '850 ms'],
    [12_345, '12.3 s'],
    [4 * 60_000 + 5_000, '4 min 05 s'],
    [2 * 3_600_000 + 3 * 60_000, '2 h 03 min'],
    [3 * 86_400_000 + 4 * 3_600_000, '3 d 4 h'],
  ])('%d ms is "%s"', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });

  it('reads a dash for a negative or impossible duration', () => {
    expect(formatDuration(-1)).toBe('—');
    expect(formatDuration(Number.NaN)).toBe('—');
  });
});

describe('Function: elapsedBetween', () => {
  it('measures to the end, or to now while there is none', () => {
    expect(elapsedBetween(ago(3_000), ago(1_000), NOW)).toBe('2.0 s');
    expect(elapsedBetween(ago(1_500), undefined, NOW)).toBe('1.5 s');
    expect(elapsedBetween(undefined, undefined, NOW)).toBe('—');
  });
});

describe('Helpers', () => {
  it('shortens ids, counts, and prints times in UTC', () => {
    expect(shortId('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe('0f8fad5b');
    expect(plural(1, 'job')).toBe('1 job');
    expect(plural(1200, 'job')).toBe('1,200 jobs');
    expect(absoluteTime('2024-05-01T12:03:22.500Z')).toBe('2024-05-01 12:03:22 UTC');
    expect(absoluteTime(undefined)).toBe('');
  });
});

describe('Function: lastChange', () => {
  it("is the job's updatedAt until the page sees its version change later", () => {
    const updated = '2024-05-01T12:00:00.000Z';
    expect(lastChange(updated, undefined)).toBe(updated);
    expect(lastChange(updated, Date.parse(updated) - 1000)).toBe(updated);
    expect(lastChange(updated, Date.parse(updated) + 30_000)).toBe('2024-05-01T12:00:30.000Z');
  });
});
