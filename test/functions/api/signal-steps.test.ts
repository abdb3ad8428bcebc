import { describe, expect, it } from 'vitest';
import type { StoredWorkflow, WorkflowRegistry } from '../../../engine/index.js';
import { SignalSteps } from '../../../functions/api/signal-steps.js';

const DEFINITION = {
  name: 'review',
  steps: [{ name: 'draft' }, { name: 'approve', type: 'signal' as const }],
  tasks: [{ name: 'page', itemListKey: 'pages', steps: [{ name: 'sign', type: 'signal' as const }] }],
};

/** A registry that counts its reads; `missing` versions are not found, `broken` ones fail. */
function registry(options: { missing?: number; broken?: number } = {}) {
  const reads: string[] = [];
  const registry: Pick<WorkflowRegistry, 'getWorkflow'> = {
    async getWorkflow(name, version) {
      reads.push(`${name}@${version}`);
      if (version === options.broken) throw new Error('the store is down');
      if (version === options.missing) return undefined;
      return { definition: DEFINITION, version: version ?? 1 } as unknown as StoredWorkflow;
    },
  };
  return { registry, reads };
}

describe('Class: SignalSteps', () => {
  it("reads a version's definition once for many jobs asked at once, and tells a child's task apart", async () => {
    const { registry: store, reads } = registry();
    const steps = new SignalSteps(store);
    const jobs = Array.from({ length: 50 }, () => ({ workflow: 'review', version: 1, task: null }));
    const found = await Promise.all(jobs.map((job) => steps.of(job)));
    expect(found.every((set) => [...set].join() === 'approve')).toBe(true);
    expect([...(await steps.of({ workflow: 'review', version: 1, task: 'page' }))]).toEqual(['sign']);
    expect(reads).toEqual(['review@1', 'review@1']);
  });

  it('asks again for a version it could not read', async () => {
    const { registry: store, reads } = registry({ missing: 2, broken: 3 });
    const steps = new SignalSteps(store);
    expect((await steps.of({ workflow: 'review', version: 2, task: null })).size).toBe(0);
    await expect(steps.of({ workflow: 'review', version: 3, task: null })).rejects.toThrow('down');
    await steps.of({ workflow: 'review', version: 2, task: null });
    await steps.of({ workflow: 'review', version: 3, task: null }).catch(() => undefined);
    expect(reads).toEqual(['review@2', 'review@3', 'review@2', 'review@3']);
  });
});
