import { describe, expect, it } from 'vitest';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const DIAMOND = `workflows:
  - name: diamond
    steps:
      - name: s1
      - name: s2
        depends: [ s1 ]
      - name: s3
        queue: third
        depends: [ s1 ]
      - name: s4
        depends: [ s2, s3 ]
`;

async function diamond(): Promise<{ world: SimulatedWorld; id: string }> {
  const world = new SimulatedWorld();
  await world.register(DIAMOND);
  const id = await world.start('diamond', { start: true });
  return { world, id };
}

describe('Rules: running a job', () => {
  it('sends the steps without depends the job input, with the correlation id, queue and attempt', async () => {
    const { world, id } = await diamond();
    expect(world.take()).toEqual([
      {
        jobId: id,
        step: 's1',
        queue: 's1',
        vhost: null,
        correlationId: `${id}:s1`,
        attempt: 1,
        body: { start: true },
      },
    ]);
  });

  it('dispatches ready steps at once, so independent steps run in parallel, each to its queue', async () => {
    const { world } = await diamond();
    const [s1] = world.take();
    await world.reply(s1!, { from: 's1' });
    const next = world.take();
    expect(next.map((request) => [request.step, request.queue])).toEqual([
      ['s2', 's2'],
      ['s3', 'third'],
    ]);
    expect(next.map((request) => request.body)).toEqual([{ from: 's1' }, { from: 's1' }]);
  });

  it.each([
    ['s2 first', [0, 1]],
    ['s3 first', [1, 0]],
  ])(
    'reaches the end of a diamond whatever the reply order (%s), merging in depends order',
    async (_, order) => {
      const { world, id } = await diamond();
      await world.reply(world.take()[0]!, { shared: 's1', one: 1 });
      const middle = world.take();
      for (const index of order) {
        const request = middle[index]!;
        await world.reply(request, { shared: request.step, [request.step]: true });
      }
      const [s4] = world.take();
      expect(s4?.step).toBe('s4');
      expect(s4?.body).toEqual({ shared: 's2', s2: true, s3: true });
      await world.reply(s4!, { done: true });
      const job = await world.job(id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ done: true });
      expect(world.take()).toEqual([]);
    },
  );

  it("makes the job's result the merge of its terminal steps' outputs in declaration order", async () => {
    const world = new SimulatedWorld();
    await world.register(`workflows:
  - name: two-ends
    steps:
      - name: first
      - name: left
        depends: [ first ]
      - name: right
        depends: [ first ]
`);
    const id = await world.start('two-ends');
    await world.reply(world.take()[0]!, {});
    const [left, right] = world.take();
    await world.reply(right!, { key: 'right', r: 1 });
    await world.reply(left!, { key: 'left', l: 1 });
    expect((await world.job(id)).result).toEqual({ key: 'left', l: 1, r: 1 });
  });

  it('lets outputs that are not objects contribute nothing: a null reply means {}', async () => {
    const world = new SimulatedWorld();
    await world.register(
      'workflows:\n  - name: w\n    steps:\n      - name: a\n      - name: b\n        depends: [ a ]\n',
    );
    await world.start('w', { x: 1 });
    await world.reply(world.take()[0]!, 'null');
    expect(world.take()[0]?.body).toEqual({});
  });

  it('changes nothing on a duplicate or late reply', async () => {
    const { world, id } = await diamond();
    const [s1] = world.take();
    await world.reply(s1!, { v: 1 });
    const before = await world.job(id);
    await world.reply(s1!, { v: 2 });
    await world.reply(s1!, { v: 3 });
    expect(world.take()).toHaveLength(2);
    expect(await world.job(id)).toEqual(before);
  });

  it('ignores replies for unknown jobs, unknown steps and steps not yet dispatched', async () => {
    const { world, id } = await diamond();
    const before = await world.job(id);
    await world.deliver([
      { correlationId: `${crypto.randomUUID()}:s1`, body: '{}' },
      { correlationId: `${id}:nope`, body: '{}' },
      { correlationId: `${id}:s4`, body: '{}' },
      { correlationId: 'not-a-correlation-id', body: '{}' },
      { body: '{}' },
    ]);
    expect(await world.job(id)).toEqual(before);
  });

  it('processes a batch holding several replies of one job as one write', async () => {
    const { world, id } = await diamond();
    await world.reply(world.take()[0]!, {});
    const [s2, s3] = world.take();
    await world.deliver([
      { correlationId: s2!.correlationId, body: '{"a":1}' },
      { correlationId: s3!.correlationId, body: '{"b":2}' },
      { correlationId: s2!.correlationId, body: '{"a":9}' },
    ]);
    expect(world.take().map((request) => [request.step, request.body])).toEqual([['s4', { a: 1, b: 2 }]]);
    expect(stepsOf(await world.job(id)).s2?.output).toEqual({ a: 1 });
  });
});
