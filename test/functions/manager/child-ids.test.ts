import { describe, expect, it } from 'vitest';
import { derivedChildId } from '../../../engine/index.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

// `each` fans out as the job starts; `later` only after its first step.
const WORKFLOWS = `workflows:
  - name: each
    steps:
      - name: fan
        task: t
    tasks:
      - name: t
        itemListKey: items
        steps:
          - name: work
  - name: later
    steps:
      - name: first
      - name: fan
        task: t
        depends: [ first ]
    tasks:
      - name: t
        itemListKey: items
        steps:
          - name: work
  - name: plain
    steps:
      - name: a
`;

const PARENT = '3f0c6a52-1d7e-4b8a-9c2e-5a6b7c8d9e0f';

async function world(fanOutSlice?: number): Promise<SimulatedWorld> {
  const simulated = new SimulatedWorld(SqliteStore.open(':memory:'), undefined, undefined, fanOutSlice);
  await simulated.register(WORKFLOWS);
  return simulated;
}

/** Replies to every request until none is left; returns the jobs that were asked for work. */
async function runToEnd(simulated: SimulatedWorld): Promise<string[]> {
  const asked: string[] = [];
  for (let requests = simulated.take(); requests.length; requests = simulated.take()) {
    for (const request of requests) {
      asked.push(request.jobId);
      await simulated.reply(request);
    }
  }
  return asked;
}

describe("A fan-out's child ids", () => {
  it("complete 3/3 when a job was started under a child's would-be id (fan-out at start)", async () => {
    const simulated = await world();
    const squatter = derivedChildId(PARENT, 'fan', 1);
    await simulated.start('plain', {}, squatter);
    simulated.take();
    await simulated.start('each', { items: ['a', 'b', 'c'] }, PARENT);
    const children = simulated.take();
    expect(children.map((request) => request.body.item)).toEqual(['a', 'b', 'c']);
    expect(new Set(children.map((request) => request.jobId)).size).toBe(3);
    expect(children.map((request) => request.jobId)).not.toContain(squatter);
    for (const child of children) await simulated.reply(child);
    const parent = await simulated.job(PARENT);
    expect(parent.status).toBe('completed');
    expect(parent.result).toEqual({ items: ['a', 'b', 'c'] });
    expect((await simulated.job(squatter)).workflow).toBe('plain');
    // Starting it again is still the same job: nothing new is created or sent.
    const again = await simulated.manager.startJob({
      workflow: 'each',
      input: { items: ['a', 'b', 'c'] },
      id: PARENT,
    });
    expect(again.created).toBe(false);
    expect(simulated.take()).toEqual([]);
  });

  it('complete when the taken id belongs to a later slice, created by a follow-up', async () => {
    const simulated = await world(2);
    const parent = await simulated.start('later', { items: ['a', 'b', 'c', 'd'] });
    const first = simulated.take();
    const squatter = derivedChildId(parent, 'fan', 3);
    await simulated.start('plain', {}, squatter);
    simulated.take();
    await simulated.reply(first[0]!);
    const asked = await runToEnd(simulated);
    expect(asked).toHaveLength(4);
    expect(asked).not.toContain(squatter);
    expect((await simulated.job(parent)).status).toBe('completed');
    expect((await simulated.store.listChildren(parent, 'fan', { limit: 10 })).children).toHaveLength(4);
  });

  it("give an element's id taken by another job's child a derived id instead", async () => {
    const simulated = await world();
    await simulated.start('each', { items: ['x'] }, PARENT);
    const [other] = simulated.take();
    const parent = await simulated.start('each', { items: [{ id: other!.jobId }, 'y'] });
    const children = simulated.take();
    expect(children.map((request) => request.jobId)).toEqual([
      derivedChildId(parent, 'fan', 0),
      derivedChildId(parent, 'fan', 1),
    ]);
    for (const child of children) await simulated.reply(child);
    await simulated.reply(other!);
    expect((await simulated.job(parent)).status).toBe('completed');
    expect((await simulated.job(PARENT)).status).toBe('completed');
  });
});
