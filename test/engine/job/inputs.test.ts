import { describe, expect, it } from 'vitest';
import { applyEvent, createJob, type JsonObject } from '../../../engine/index.js';
import { compiled, T0 } from '../../support/simulated-world.js';

const ID = '8c2e4a6b-1d3f-4b5a-9e7c-2f4a6b8c0d1e';
const CHAIN = compiled(`workflows:
  - name: pair
    steps:
      - name: first
      - name: second
        depends: [ first ]
`);

describe('The input of a step after a single other', () => {
  it("is that step's output, keys in order (__proto__ as a key of its own), in an object of its own", () => {
    const output = JSON.parse('{"b": 1, "__proto__": {"x": 2}, "a": [3]}') as JsonObject;
    const started = createJob(CHAIN, { id: ID, input: {} }, { now: T0 });
    const t = applyEvent(CHAIN, started.job, { type: 'reply', step: 'first', output }, { now: T0 });
    const body = t.requests[0]?.body as JsonObject;

    expect(Object.keys(body)).toEqual(['b', '__proto__', 'a']);
    expect(body).toEqual(output);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);

    body.b = 99;
    expect(t.job.steps.get(0)?.output?.b).toBe(1);
  });
});
