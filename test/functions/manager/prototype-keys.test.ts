import { describe, expect, it } from 'vitest';
import type { Json, JsonObject, Store } from '../../../engine/index.js';
import { MemoryStore } from '../../../functions/adapters/memory/store.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { prototypeFingerprint } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

/** Fan-outs over lists held under `__proto__` and `constructors` (item key `constructor`), merged with the rest. */
const WORKFLOWS = `workflows:
  - name: proto
    steps:
      - name: emit
      - name: over-proto
        task: by-proto
        depends: [ emit ]
      - name: over-constructors
        task: by-constructor
        depends: [ emit ]
      - name: merge
        depends: [ over-proto, over-constructors, emit ]
    tasks:
      - name: by-proto
        itemListKey: __proto__
        steps:
          - name: work
      - name: by-constructor
        itemListKey: constructors
        itemKey: constructor
        steps:
          - name: work
`;

const INPUT =
  '{"__proto__": {"polluted": "input"}, "constructor": {"prototype": {"polluted": "input"}}, "prototype": 1}';
const EMITTED =
  '{"__proto__": [{"__proto__": {"polluted": "element"}}, 2], "constructors": [{"prototype": {"polluted": 1}}, "c"],' +
  ' "prototype": {"polluted": "emit"}, "hasOwnProperty": "shadow", "toString": 5}';

const own = (value: Json | undefined, key: string): Json | undefined =>
  value !== null && typeof value === 'object' && Object.hasOwn(value, key)
    ? (value as JsonObject)[key]
    : undefined;

describe.each<[string, () => Store]>([
  ['the in-memory store', () => new MemoryStore()],
  ['the SQLite store', () => SqliteStore.open(':memory:')],
])('Prototype keys through the manager on %s', (_, open) => {
  it('keeps them as data in inputs, merges, fan-out lists, item keys and fan-in, and pollutes nothing', async () => {
    // Prepare
    const before = prototypeFingerprint();
    const world = new SimulatedWorld(open());
    await world.register(WORKFLOWS);

    // Act: workers echo their input; `emit` replies lists under the dangerous keys.
    const id = await world.start('proto', JSON.parse(INPUT) as JsonObject);
    for (let round = 0; round < 20; round++) {
      const requests = world.take();
      if (!requests.length) break;
      for (const request of requests)
        await world.reply(request, request.step === 'emit' ? EMITTED : JSON.stringify(request.body));
    }
    const job = await world.job(id);

    // Assess
    expect(job.status).toBe('completed');
    const result = job.result as JsonObject;
    // over-proto gathered its children's `__proto__` values; over-constructors its `constructor` values.
    expect(JSON.stringify(own(result, '__proto__'))).toBe('[{"__proto__":{"polluted":"element"}},2]');
    expect(JSON.stringify(own(result, 'constructors'))).toBe('[{"prototype":{"polluted":1}},"c"]');
    expect(own(result, 'prototype')).toEqual({ polluted: 'emit' });
    expect(own(result, 'hasOwnProperty')).toBe('shadow');
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    const children = await world.store.listChildren(id, 'over-proto', { limit: 10 });
    expect(children.children.map((child) => JSON.stringify(own(child.input, '__proto__')))).toEqual([
      '{"__proto__":{"polluted":"element"}}',
      '2',
    ]);
    const constructorChildren = await world.store.listChildren(id, 'over-constructors', { limit: 10 });
    expect(
      constructorChildren.children.map((child) => JSON.stringify(own(child.input, 'constructor'))),
    ).toEqual(['{"prototype":{"polluted":1}}', '"c"']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeFingerprint()).toBe(before);
    await world.store.close();
  });
});
