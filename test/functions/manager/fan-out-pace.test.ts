import { describe, expect, it } from 'vitest';
import type { Commit, Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { FanOutPace } from '../../../functions/manager/fan-out-pace.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOW = `workflows:
  - name: wide
    steps:
      - name: fan
        task: t
    tasks:
      - name: t
        itemListKey: items
        steps:
          - name: work
`;

/** A memory store whose commits take `msPerChild` of the world's clock for each child they create. */
function slowStore(msPerChild: number, clock: { world?: SimulatedWorld }): Store {
  const memory = new MemoryStore();
  return new Proxy(memory, {
    get(target, property) {
      if (property === 'commit') {
        return async (commits: Commit[]) => {
          const children = commits.reduce((sum, commit) => sum + commit.creates.length, 0);
          if (clock.world) clock.world.now += children * msPerChild;
          return target.commit(commits);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('A fan-out paced to the invocation', () => {
  it('creates every slice of the fixed size when there is no deadline (serve)', () => {
    const pace = new FanOutPace({ maxSlice: 1000, clock: () => 0 });
    pace.committed(1000, 60_000);
    expect(pace.slice()).toBe(1000);
    expect(pace.mayCreate()).toBe(true);
  });

  it('sizes a slice to half the time left at the cost measured so far, and holds one that does not fit', () => {
    let now = 0;
    const pace = new FanOutPace({ maxSlice: 1000, initialMsPerChild: 10, clock: () => now });
    pace.setDeadline(10_000);
    expect(pace.slice()).toBe(500);
    // Commits turn out slower: 20 ms a child (and sends 0): the average moves toward it.
    pace.committed(100, 2_000);
    pace.sent(100, 0);
    expect(pace.msPerChild).toBeCloseTo(5 * 0.7 + 20 * 0.3 + 5 * 0.7, 5);
    expect(pace.slice()).toBe(Math.floor(5_000 / pace.msPerChild));
    now = 9_700;
    expect(pace.slice()).toBeLessThan(50);
    expect(pace.mayCreate()).toBe(false);
    // The next invocation's deadline lets it go on.
    pace.setDeadline(now + 60_000);
    expect(pace.mayCreate()).toBe(true);
    expect(pace.slice()).toBe(1000);
  });

  it('stops creating children before the deadline, drains, and creates the rest in the next invocation', async () => {
    // Prepare: commits cost 4 ms of the world's clock per child; the invocation has 3 s.
    const clock: { world?: SimulatedWorld } = {};
    const world = new SimulatedWorld(slowStore(4, clock), undefined, undefined, 500);
    clock.world = world;
    await world.register(WORKFLOW);
    const items = Array.from({ length: 2_000 }, (_, n) => n);
    const deadline = world.now + 3_000;
    world.manager.setDeadline(deadline);

    // Act
    const id = await world.start('wide', { items });
    const first = world.take();

    // Assess: what fitted was created (more than one slice), none of it past the deadline, and drain
    // did not wait for the rest.
    expect(first.length).toBeGreaterThan(250);
    expect(first.length).toBeLessThan(items.length);
    expect(world.now).toBeLessThanOrEqual(deadline);
    expect((await world.job(id)).steps.find((step) => step.name === 'fan')?.children?.created).toBe(
      first.length,
    );

    // Act: the next invocation has time again.
    world.manager.setDeadline(world.now + 60_000);
    await world.manager.drain();
    const rest = world.take();
    for (const request of [...first, ...rest]) await world.reply(request);

    // Assess: every child once, and the fan-out gathered them.
    expect(new Set([...first, ...rest].map((request) => request.jobId)).size).toBe(items.length);
    expect(first.length + rest.length).toBe(items.length);
    const parent = await world.job(id);
    expect(parent.status).toBe('completed');
  });
});
