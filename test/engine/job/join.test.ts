import { describe, expect, it } from 'vitest';
import { joinVerdict } from '../../../engine/job/join.js';

describe('Function: joinVerdict', () => {
  it.each([
    ['all_completed', ['completed', 'pending'], 'wait'],
    ['all_completed', ['skipped', 'skipped'], 'skip'],
    ['all_completed', ['skipped', 'failed'], 'run'],
    ['none_failed', ['skipped', 'skipped'], 'run'],
    ['none_failed', ['completed', 'failed'], 'skip'],
    ['none_failed', ['completed', 'pending'], 'wait'],
    ['any_completed', ['pending', 'completed'], 'run'],
    ['any_completed', ['pending', 'skipped'], 'wait'],
    ['any_completed', ['failed', 'skipped'], 'skip'],
    ['none_failed', [], 'run'],
  ] as const)('%s over %j: %s', (rule, statuses, verdict) => {
    expect(joinVerdict(rule, statuses).kind).toBe(verdict);
  });
});
