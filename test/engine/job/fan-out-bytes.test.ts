import { describe, expect, it } from 'vitest';
import { createJob } from '../../../engine/index.js';
import { compiled } from '../../support/simulated-world.js';

const FAN = `workflows:
  - name: fan
    steps:
      - name: each
        task: per-item
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
`;

const input = (children: number, sharedBytes: number) => ({
  items: Array.from({ length: children }, (_, i) => i),
  blob: 'x'.repeat(sharedBytes),
});

describe('Rule: the bytes a fan-out gives its children', () => {
  it('fails the step, naming the total and pointing to input: mapping, when the copies would exceed the budget', () => {
    const t = createJob(
      compiled(FAN),
      { id: '00000000-0000-4000-8000-000000000001', input: input(5000, 100_000) },
      {
        now: 0,
      },
    );
    expect(t.job.status).toBe('failed');
    expect(t.creates).toEqual([]);
    expect(t.job.error?.message).toMatch(
      /^the fan-out would give its 5000 children 476\.\d MiB of input \(100011 bytes each besides its element\); a fan-out may give at most 256\.0 MiB: map the step's input with "input:"/,
    );
  });

  it('creates the children when the copies stay within it, and a smaller budget can be set', () => {
    const small = createJob(
      compiled(FAN),
      { id: '00000000-0000-4000-8000-000000000002', input: input(100, 1000) },
      {
        now: 0,
      },
    );
    expect(small.creates).toHaveLength(100);
    const limited = createJob(
      compiled(FAN),
      { id: '00000000-0000-4000-8000-000000000003', input: input(100, 1000) },
      { now: 0, maxFanOutBytes: 50_000 },
    );
    expect(limited.job.status).toBe('failed');
  });
});
