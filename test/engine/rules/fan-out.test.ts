import { describe, expect, it } from 'vitest';
import { derivedChildId } from '../../../engine/index.js';
import { NESTED_WORKFLOW } from '../../support/nested-workflow.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const fanOutWorkflow = (task: string, extraTaskKeys = '') => `workflows:
  - name: fan
    steps:
      - name: split
      - name: each
        task: ${task}
        depends: [ split ]
      - name: after
        depends: [ each ]
    tasks:
      - name: ${task}
        itemListKey: elements
${extraTaskKeys}        steps:
          - name: work
`;

async function fanOut(extraTaskKeys = '', splitOutput: object = { elements: [1, 2], top: 'value' }) {
  const world = new SimulatedWorld();
  await world.register(fanOutWorkflow('per-element', extraTaskKeys));
  const id = await world.start('fan');
  await world.reply(world.take()[0]!, splitOutput as never);
  return { world, id };
}

describe('Rules: fan-out steps', () => {
  it('sends one child request per element, under the singular key, and after their replies exactly the next step', async () => {
    const { world, id } = await fanOut();
    const children = world.take();
    expect(children.map((request) => [request.step, request.body])).toEqual([
      ['work', { top: 'value', element: 1 }],
      ['work', { top: 'value', element: 2 }],
    ]);
    expect(children.map((request) => request.jobId)).toEqual([
      derivedChildId(id, 'each', 0),
      derivedChildId(id, 'each', 1),
    ]);
    await world.reply(children[0]!);
    expect(world.take()).toEqual([]);
    await world.reply(children[1]!);
    const next = world.take();
    expect(next.map((request) => [request.jobId, request.step, request.body])).toEqual([
      [id, 'after', { top: 'value', elements: [1, 2] }],
    ]);
  });

  it('uses the key as is when it has no trailing s (k1 -> k1)', async () => {
    const world = new SimulatedWorld();
    await world.register(
      'workflows:\n  - name: k\n    steps:\n      - name: fan\n        task: t\n    tasks:\n      - name: t\n        itemListKey: k1\n        steps: [ { name: w } ]\n',
    );
    const id = await world.start('k', { k1: ['a', 'b'], other: 1 });
    const children = world.take();
    expect(children.map((request) => request.body)).toEqual([
      { other: 1, k1: 'a' },
      { other: 1, k1: 'b' },
    ]);
    for (const child of children) await world.reply(child, { k1: `${child.body.k1}!` });
    expect((await world.job(id)).result).toEqual({ k1: ['a!', 'b!'] });
  });

  it('uses itemKey when the task sets it', async () => {
    const { world } = await fanOut('        itemKey: value\n');
    expect(world.take().map((request) => request.body)).toEqual([
      { top: 'value', value: 1 },
      { top: 'value', value: 2 },
    ]);
  });

  it('keeps length and order, taking the original element where a child result lacks the key', async () => {
    const { world } = await fanOut('', { elements: ['a', 'b', 'c'] });
    const children = world.take();
    await world.reply(children[2]!, { element: 'C', from: 'third' });
    await world.reply(children[1]!, { unrelated: true, from: 'second' });
    await world.reply(children[0]!, { element: 'A' });
    const [after] = world.take();
    expect(after?.body).toEqual({ unrelated: true, from: 'second', elements: ['A', 'b', 'C'] });
  });

  it('takes each other key from the first child, in list order, whose result has it', async () => {
    const { world } = await fanOut('', { elements: [1, 2, 3] });
    const children = world.take();
    await world.reply(children[2]!, { element: 3, k: 'third', only3: true });
    await world.reply(children[1]!, { element: 2, k: 'second' });
    await world.reply(children[0]!, { element: 1 });
    expect(world.take()[0]?.body).toEqual({ k: 'second', only3: true, elements: [1, 2, 3] });
  });

  it('completes an empty list at once, with the input and an empty list', async () => {
    const { world, id } = await fanOut('', { elements: [], top: 1 });
    const [after] = world.take();
    expect([after?.step, after?.body]).toEqual(['after', { elements: [], top: 1 }]);
    expect(stepsOf(await world.job(id)).each?.status).toBe('completed');
  });

  it('treats null as an empty list', async () => {
    const { world } = await fanOut('', { elements: null });
    expect(world.take()[0]?.body).toEqual({ elements: [] });
  });

  it.each([
    [{ top: 1 }, 'task "per-element" fans out over "elements", but the input has no such key'],
    [{ elements: 'abc' }, 'task "per-element" fans out over "elements", which must be a list, got string'],
    [{ elements: { a: 1 } }, 'task "per-element" fans out over "elements", which must be a list, got object'],
  ])('fails the step and the job when the list is missing or not a list (%j)', async (output, message) => {
    const { world, id } = await fanOut('', output);
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(stepsOf(job).each?.status).toBe('failed');
    expect(job.error).toMatchObject({ step: 'each', message });
    expect(world.take()).toEqual([]);
  });

  it("uses an element's own UUID id as the child id, unless another job or element already has it", async () => {
    const world = new SimulatedWorld();
    await world.register(fanOutWorkflow('t'));
    const taken = await world.start('fan');
    const own = crypto.randomUUID();
    const id = await world.start('fan');
    world.take();
    const split = (await world.store.getJob(id)) && world.sent.find((request) => request.jobId === id);
    await world.reply(split!, {
      elements: [{ id: own.toUpperCase() }, { id: own }, { id: taken }, { id: 'not-a-uuid' }],
    });
    expect(world.take().map((request) => request.jobId)).toEqual([
      own,
      derivedChildId(id, 'each', 1),
      derivedChildId(id, 'each', 2),
      derivedChildId(id, 'each', 3),
    ]);
  });

  it('does not let an element claim the id derived for a later sibling: all children run', async () => {
    const world = new SimulatedWorld();
    await world.register(fanOutWorkflow('t'));
    const id = await world.start('fan');
    const split = world.take()[0]!;
    await world.reply(split, { elements: [{ id: derivedChildId(id, 'each', 2) }, 'b', 'c'] });
    const children = world.take();
    expect(new Set(children.map((request) => request.jobId)).size).toBe(3);
    expect(children.map((request) => request.jobId)).toEqual([
      derivedChildId(id, 'each', 0),
      derivedChildId(id, 'each', 1),
      derivedChildId(id, 'each', 2),
    ]);
    for (const child of children) await world.reply(child);
    await world.reply(world.take()[0]!);
    expect((await world.job(id)).status).toBe('completed');
  });

  it("does not let a job started under a child's would-be id hang that fan-out (3/3 complete)", async () => {
    const world = new SimulatedWorld();
    await world.register(fanOutWorkflow('t'));
    const id = await world.start('fan');
    const split = world.take()[0]!;
    // Another caller starts a job under the id the fan-out would derive for its second child.
    const squatter = await world.start('fan', {}, derivedChildId(id, 'each', 1));
    world.take();
    await world.reply(split, { elements: ['a', 'b', 'c'] });
    const children = world.take();
    expect(children.map((request) => request.body.element)).toEqual(['a', 'b', 'c']);
    expect(children.map((request) => request.jobId)).not.toContain(squatter);
    for (const child of children) await world.reply(child);
    const after = world.take();
    expect(after.map((request) => [request.jobId, request.step])).toEqual([[id, 'after']]);
    await world.reply(after[0]!);
    expect((await world.job(id)).status).toBe('completed');
    expect((await world.job(squatter)).parent).toBeNull();
  });

  it('creates the same children when a transition runs again (deterministic ids)', async () => {
    const a = await fanOut();
    const b = await fanOut();
    const idsOf = (world: SimulatedWorld, parent: string) =>
      world
        .take()
        .map((request) =>
          request.jobId
            .replace(derivedChildId(parent, 'each', 0), 'child-0')
            .replace(derivedChildId(parent, 'each', 1), 'child-1'),
        );
    expect(idsOf(a.world, a.id)).toEqual(['child-0', 'child-1']);
    expect(idsOf(b.world, b.id)).toEqual(['child-0', 'child-1']);
  });

  it('keeps at most `concurrency` children in flight, and runs them all', async () => {
    const { world, id } = await fanOut('        concurrency: 2\n', { elements: [0, 1, 2, 3, 4] });
    let inFlight = world.take();
    expect(inFlight.map((request) => request.body.element)).toEqual([0, 1]);
    const seen: unknown[] = [];
    while (inFlight.length) {
      expect(inFlight.length).toBeLessThanOrEqual(2);
      const [first, ...rest] = inFlight;
      seen.push(first?.body.element);
      await world.reply(first!);
      inFlight = [...rest, ...world.take().filter((request) => request.step === 'work')];
    }
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(world.sent.filter((request) => request.jobId === id).map((request) => request.step)).toEqual([
      'split',
      'after',
    ]);
  });

  it('feeds an aggregated list into a second fan-out', async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: twice
    steps:
      - name: first
        task: double
      - name: second
        task: double
        depends: [ first ]
    tasks:
      - name: double
        itemListKey: numbers
        steps: [ { name: times-two } ]
`);
    const id = await world.start('twice', { numbers: [1, 2, 3] });
    for (let round = 0; round < 2; round++) {
      for (const request of world.take())
        await world.reply(request, { number: (request.body.number as number) * 2 });
    }
    expect((await world.job(id)).result).toEqual({ numbers: [4, 8, 12] });
  });

  it('runs nested tasks: a child that fans out again', async () => {
    const world = new SimulatedWorld();
    await world.register(NESTED_WORKFLOW);
    const id = await world.start('nested', { groups: [[1, 2], [], [3]] });
    const leaves = world.take();
    expect(leaves.map((request) => request.body)).toEqual([{ item: 1 }, { item: 2 }, { item: 3 }]);
    for (const leaf of leaves.reverse()) await world.reply(leaf, { item: (leaf.body.item as number) * 10 });
    const job = await world.job(id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ groups: [[10, 20], [], [30]] });
  });

  it('fails the step and the job when a child fails; running children are cancelled, waiting ones stay, late replies are ignored', async () => {
    const { world, id } = await fanOut('        concurrency: 2\n', { elements: [0, 1, 2, 3] });
    const [c0, c1] = world.take();
    await world.reply(c0!, { error: 'bad element' }, { type: 'error' });
    const job = await world.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.step).toBe('each');
    expect(job.error?.message).toMatch(/^child 0 \(.+\) failed: bad element$/);
    const { children } = await world.store.listChildren(id, 'each', { limit: 10 });
    expect(children.map((child) => child.status)).toEqual(['failed', 'cancelled', 'waiting', 'waiting']);
    await world.reply(c1!, { element: 'late' });
    expect(world.take()).toEqual([]);
    expect((await world.store.listChildren(id, 'each', { limit: 10 })).children[1]?.status).toBe('cancelled');
  });

  it('reruns failed, cancelled and never-dispatched children on retry; completed ones keep their results', async () => {
    const { world, id } = await fanOut('        concurrency: 2\n', { elements: [0, 1, 2, 3] });
    const [c0, c1] = world.take();
    await world.reply(c1!, { element: 'one' });
    // Slots: child 1's slot runs 1, 3; child 0's runs 0, 2.
    const [c3] = world.take();
    await world.reply(c0!, { error: 'first try fails' }, { type: 'error' });
    expect(
      (await world.store.listChildren(id, 'each', { limit: 10 })).children.map((child) => child.status),
    ).toEqual(['failed', 'completed', 'waiting', 'cancelled']);
    expect((await world.job(id)).status).toBe('failed');
    await world.manager.retry(id);
    await world.manager.drain();
    const rerun = world.take();
    expect(rerun.map((request) => request.body.element).sort()).toEqual([0, 3]);
    expect(rerun.every((request) => request.attempt === 2)).toBe(true);
    expect(c3?.body.element).toBe(3);
    let pending = rerun;
    while (pending.length) {
      for (const request of pending) await world.reply(request, { element: `done-${request.body.element}` });
      pending = world.take().filter((request) => request.step === 'work');
    }
    const [after] = world.take().length ? [] : world.sent.filter((request) => request.step === 'after');
    expect(after?.body).toEqual({ elements: ['done-0', 'one', 'done-2', 'done-3'] });
  });

  it('refuses a list longer than the manager allows, with a clear error', async () => {
    const world = new SimulatedWorld();
    await world.register(fanOutWorkflow('t'));
    const id = await world.start('fan');
    const manager = world.manager as unknown as { maxFanOut: number };
    manager.maxFanOut = 3;
    await world.reply(world.take()[0]!, { elements: [1, 2, 3, 4] });
    expect((await world.job(id)).error?.message).toBe(
      '"elements" has 4 elements; a fan-out takes at most 3 (a setting of the manager)',
    );
  });
});

describe('Rules: a large fan-out, its children created slice by slice', () => {
  it('sends every child its request and gathers the same result as a fan-out created at once', async () => {
    const elements = [0, 1, 2, 3, 4, 5, 6];
    const results = [];
    for (const slice of [undefined, 3]) {
      const world = new SimulatedWorld(undefined, undefined, undefined, slice);
      await world.register(fanOutWorkflow('per-element'));
      const id = await world.start('fan');
      await world.reply(world.take()[0]!, { elements });
      const children = world.take();
      expect(children.map((request) => request.body.element)).toEqual(elements);
      for (const child of children.reverse())
        await world.reply(child, { element: (child.body.element as number) * 2 });
      const [after] = world.take();
      expect(after?.body).toEqual({ elements: [0, 2, 4, 6, 8, 10, 12] });
      const job = await world.job(id);
      expect(stepsOf(job).each?.children).toEqual({ total: 7, concurrency: 7 });
      results.push(job.steps);
    }
    expect(results[1]).toEqual(results[0]);
  });

  it('starts the children of later slices that finish as they start, and counts each once', async () => {
    const world = new SimulatedWorld(undefined, undefined, undefined, 1);
    await world.register(`workflows:
  - name: nested
    steps:
      - name: outer
        task: per-group
      - name: after
        depends: [ outer ]
    tasks:
      - name: per-group
        itemListKey: groups
        steps:
          - name: inner
            task: per-item
      - name: per-item
        itemListKey: group
        itemKey: item
        steps: [ { name: leaf } ]
`);
    const id = await world.start('nested', { groups: [[], [1], [], [], [2]] });
    const leaves = world.take();
    expect(leaves.map((request) => request.body)).toEqual([{ item: 1 }, { item: 2 }]);
    for (const leaf of leaves) await world.reply(leaf, { item: (leaf.body.item as number) * 10 });
    const [after] = world.take();
    expect(after?.body).toEqual({ groups: [[], [10], [], [], [20]] });
    expect(await world.store.getFanCounts(id, 'outer')).toEqual({ total: 5, done: 5, failed: 0 });
  });
});
