import { describe, expect, it } from 'vitest';
import type { Commit, CommitResult, Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { memoryManager } from '../../support/memory-manager.js';

/**
 * A store that lands the commits of one call last first. A store may: the commits of one call are of
 * different jobs, and DynamoDB's land in any order (they run in parallel). Before its first queue
 * listing returns, `beforeFirstListing` runs: another manager acting between this one's read of the
 * counters and its read of the queue.
 */
function reversingStore(inner: Store, beforeFirstListing: () => Promise<void>): Store {
  let listed = false;
  return new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'commit')
        return async (commits: readonly Commit[]): Promise<CommitResult[]> => {
          const results: CommitResult[] = new Array(commits.length);
          for (let n = commits.length - 1; n >= 0; n--)
            results[n] = (await target.commit([commits[n] as Commit]))[0] as CommitResult;
          return results;
        };
      if (name === 'listQueued')
        return async (workflow: string, limit: number) => {
          if (!listed) {
            listed = true;
            await beforeFirstListing();
          }
          return target.listQueued(workflow, limit);
        };
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('promoting queued jobs (maxRunning)', () => {
  it('starts the first in line first, even when slots fill between its count and its listing and its store lands commits in any order', async () => {
    // Prepare: two slots, both jobs holding them ended by a manager that died before promoting
    // anyone; three jobs queued.
    const inner = new MemoryStore();
    const { manager: starter, bus } = memoryManager({ store: inner });
    await starter.registerWorkflow({ name: 'limited', maxRunning: 2, steps: [{ name: 'work' }] });
    const started = [];
    for (let n = 0; n < 5; n++)
      started.push((await starter.startJob({ workflow: 'limited', input: { n } })).job);
    await starter.drain();
    const [first, second, q0, q1, q2] = started.map((job) => job.id) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const dying = memoryManager({ store: inner }).manager;
    dying.stop();
    const other = memoryManager({ store: inner }).manager;
    // Another manager starts the first in line after this one counted two free slots.
    const store = reversingStore(inner, async () => {
      await other.apply([{ jobId: q0, event: { type: 'promote' } }]);
    });
    const recovering = memoryManager({ store }).manager;

    // Act
    const replies = bus.sent.filter((request) => request.jobId === first || request.jobId === second);
    await dying.handleReplies(
      replies.map((request) => ({ correlationId: request.correlationId, body: '{}' })),
    );
    await recovering.recover();
    await recovering.drain();

    // Assess: q0 and q1 hold the slots; q2, last in line, waits.
    const jobs = await inner.getJobs([first, second, q0, q1, q2]);
    expect([first, second, q0, q1, q2].map((id) => jobs.get(id)?.status)).toEqual([
      'completed',
      'completed',
      'running',
      'running',
      'queued',
    ]);
    expect((await inner.listQueued('limited', 10)).map((entry) => entry.jobId)).toEqual([q2]);
    expect(await inner.getRunningCount('limited')).toMatchObject({ running: 2, queued: 1 });
    for (const manager of [starter, other, recovering]) manager.stop();
  });
});
