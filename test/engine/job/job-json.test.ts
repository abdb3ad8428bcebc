import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Commit, type CommitResult, type JobRecord, jobRecordJson } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { deliveryArbitrary, runJob, shapeArbitrary } from '../../support/random-workflows.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

/** Checks the text of every record committed, in commit order (reused text included), against JSON.stringify. */
class CheckedStore extends MemoryStore {
  readonly written: JobRecord[] = [];

  override async commit(commits: readonly Commit[]): Promise<CommitResult[]> {
    for (const commit of commits) {
      for (const job of [commit.job, ...commit.creates]) {
        expect(jobRecordJson(job)).toBe(JSON.stringify(job));
        this.written.push(job);
      }
    }
    return super.commit(commits);
  }
}

function chainYaml(steps: number): string {
  const lines = ['workflows:', '  - name: long', '    steps:'];
  for (let n = 1; n <= steps; n++) {
    lines.push(`      - name: s${n}`, '        timeout: 10s', '        retries: 1');
    if (n > 1) lines.push(`        depends: [s${n - 1}]`);
  }
  return `${lines.join('\n')}\n`;
}

describe('Rule: a job record is written as JSON.stringify would write it', () => {
  it('for every revision of a long job, its history cut to its limit, each step timed out once and retried', async () => {
    const store = new CheckedStore();
    const world = new SimulatedWorld(store);
    await world.register(chainYaml(60));
    const id = await world.start('long', { text: 'ünïcode "quoted"\n', list: [1, 2, 3] });
    for (let n = 1; n <= 60; n++) {
      await world.advance(10_001);
      const [retry] = world.take().filter((request) => request.step === `s${n}` && request.attempt === 2);
      if (!retry) throw new Error(`no retry of s${n}`);
      await world.reply(retry, { [`out${n}`]: n, nested: { deep: [n, null, true] } });
    }
    const job = await world.job(id);
    expect(job.status).toBe('completed');
    expect(job.history?.length).toBe(200);
    expect(store.written.length).toBeGreaterThan(120);
  });

  it('for any workflow, replies in any order with duplicates', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, deliveryArbitrary, async (shape, delivery) => {
        const store = new CheckedStore();
        const { job } = await runJob(shape, delivery, store);
        expect(job.status).toBe('completed');
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  it('leaves out a key whose value is undefined, and keeps key order', async () => {
    const store = new CheckedStore();
    const world = new SimulatedWorld(store);
    await world.register(chainYaml(30));
    const id = await world.start('long');
    const job = await world.job(id);
    const { id: _id, ...rest } = job;
    const reordered = { result: undefined, ...rest, id: job.id, deadline: undefined } as unknown as JobRecord;
    expect(jobRecordJson(reordered)).toBe(JSON.stringify(reordered));
    expect(Object.keys(JSON.parse(jobRecordJson(reordered))).at(-1)).toBe('id');
  });
});
