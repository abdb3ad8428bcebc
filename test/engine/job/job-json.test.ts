import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Commit,
  type CommitResult,
  type JobJson,
  type JobRecord,
  type JobRecordText,
  jobRecordText,
} from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { deliveryArbitrary, runJob, shapeArbitrary } from '../../support/random-workflows.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

/**
 * Checks the text of every record committed, in commit order, against JSON.stringify: written from
 * the text of the revision before, as the SQLite store writes it, and alone. Like the SQLite store's
 * cache, it hands the engine the committed records themselves, so that the next revision shares
 * their unchanged parts (and their text is reused).
 */
class CheckedStore extends MemoryStore {
  readonly written: JobRecord[] = [];
  private readonly latest = new Map<string, JobRecordText>();
  followed = 0;

  latestText(id: string): JobRecordText {
    const text = this.latest.get(id);
    if (!text) throw new Error(`no record of ${id} written`);
    return text;
  }

  override async getJob(id: string): Promise<JobRecord | undefined> {
    return this.latest.get(id)?.job ?? super.getJob(id);
  }

  override async getJobs(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    const found = await super.getJobs(ids);
    for (const id of ids) {
      const latest = this.latest.get(id)?.job;
      if (latest) found.set(id, latest);
    }
    return found;
  }

  override async commit(commits: readonly Commit[]): Promise<CommitResult[]> {
    const texts: JobRecordText[] = [];
    for (const commit of commits) {
      const latest = this.latest.get(commit.job.id);
      const previous = latest?.job.rev === commit.expectedRev ? latest : undefined;
      if (previous) this.followed++;
      const text = jobRecordText(commit.job, previous);
      expect(text.json).toBe(JSON.stringify(commit.job));
      texts.push(text);
      for (const job of [commit.job, ...commit.creates]) {
        expect(jobRecordText(job).json).toBe(JSON.stringify(job));
        this.written.push(job);
      }
    }
    const results = await super.commit(commits);
    for (const [n, result] of results.entries()) {
      const commit = commits[n];
      const text = texts[n];
      if (!result.ok || !commit || !text) continue;
      this.latest.set(commit.job.id, text);
      for (const child of commit.creates)
        if (!this.latest.has(child.id)) this.latest.set(child.id, jobRecordText(child));
    }
    return results;
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
    expect(store.followed).toBe(store.written.length - 1);
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

  it('takes the text of what did not change from the revision before: its fields, states and entries', async () => {
    const store = new CheckedStore();
    const world = new SimulatedWorld(store);
    await world.register(chainYaml(30));
    const id = await world.start('long', { note: 'as started' });
    const [request] = world.take();
    if (!request) throw new Error('no request for s1');
    const first = await world.job(id);
    const firstText = store.latestText(id);
    expect(firstText.job).toBe(first);
    await world.reply(request, { out: 1 });
    const second = await world.job(id);
    expect(second.input).toBe(first.input);
    expect(second.history?.[0]).toBe(first.history?.[0]);
    // Never done to a stored record: here it shows which text came from the revision before.
    (first.input as { note: string }).note = 'changed in place';
    (first.history?.[0] as { kind: string }).kind = 'changed.in.place';
    const followed = JSON.parse(jobRecordText(second, firstText).json) as JobJson;
    expect(followed.input).toEqual({ note: 'as started' });
    expect(followed.history?.[0]?.kind).toBe('job.created');
    expect(followed.steps[1]?.name).toBe('s2');
    const alone = JSON.parse(jobRecordText(second).json) as JobJson;
    expect(alone.input).toEqual({ note: 'changed in place' });
    expect(alone.history?.[0]?.kind).toBe('changed.in.place');
  });

  it('takes the text of the history entries kept when the oldest are cut from its front', async () => {
    const store = new CheckedStore();
    const world = new SimulatedWorld(store);
    await world.register(chainYaml(120));
    const id = await world.start('long');
    const replyToNext = async () => {
      const [request] = world.take();
      if (!request) throw new Error('no request');
      await world.reply(request, {});
    };
    for (let n = 0; n < 110; n++) await replyToNext();
    const first = await world.job(id);
    const firstText = store.latestText(id);
    expect(firstText.job).toBe(first);
    await replyToNext();
    const second = await world.job(id);
    // The first entry stays; the oldest after it make room for the new ones.
    expect(first.history?.length).toBe(200);
    expect(second.history?.[0]).toBe(first.history?.[0]);
    expect(second.history?.[1]).not.toBe(first.history?.[1]);
    for (const at of [0, 10]) {
      const kept = first.history?.[at];
      expect(second.history).toContain(kept);
      (kept as { kind: string }).kind = 'changed.in.place';
    }
    const followed = JSON.parse(jobRecordText(second, firstText).json) as JobJson;
    expect(followed.history?.map((entry) => entry.kind)).not.toContain('changed.in.place');
    const alone = JSON.parse(jobRecordText(second).json) as JobJson;
    expect(alone.history?.map((entry) => entry.kind)).toContain('changed.in.place');
  });

  it('leaves out a key whose value is undefined, and keeps key order', async () => {
    const store = new CheckedStore();
    const world = new SimulatedWorld(store);
    await world.register(chainYaml(30));
    const id = await world.start('long');
    const job = await world.job(id);
    const { id: _id, ...rest } = job;
    const reordered = { result: undefined, ...rest, id: job.id, deadline: undefined } as unknown as JobRecord;
    expect(jobRecordText(reordered).json).toBe(JSON.stringify(reordered));
    expect(Object.keys(JSON.parse(jobRecordText(reordered).json)).at(-1)).toBe('id');
  });
});
