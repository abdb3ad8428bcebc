import { describe, expect, it } from 'vitest';
import { applyEvent, createJob, type EngineContext } from '../../../engine/index.js';
import { compiled, T0 } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const ID = '0b7c2f4e-5d1a-4e8b-9c3f-2a6d8e1f4b70';
const numbers = Array.from({ length: 20_000 }, (_, i) => i);
const REFUSE: EngineContext = { now: T0, oversizedRequests: 'refuse' };

const MAPPED_FIRST = compiled(`workflows:
  - name: batch
    steps:
      - name: plan
        input: '{"x": input.l.map(e, input.l)}'
`);

const SIGNALLED = compiled(`workflows:
  - name: approval
    steps:
      - name: approve
        type: signal
      - name: expand
        depends: [ approve ]
        input: '{"x": input.l.map(e, input.l)}'
`);

const FANNED = compiled(`workflows:
  - name: fan
    steps:
      - name: each
        task: per-element
    tasks:
      - name: per-element
        itemListKey: elements
        steps:
          - name: work
            input: '{"x": job.input.l.map(e, job.input.l)}'
`);

describe('A request over the size limit', () => {
  describe('by default (a reply, a timer or a follow-up built it)', () => {
    it('fails the step that built it, naming it and the limit', () => {
      const transition = createJob(MAPPED_FIRST, { id: ID, input: { l: numbers } }, { now: T0 });
      expect(transition.rejected).toBeUndefined();
      expect(transition.requests).toEqual([]);
      expect(transition.job.status).toBe('failed');
      expect(transition.job.error).toMatchObject({
        step: 'plan',
        message: expect.stringMatching(/^step "plan": .*gives more than 1048576 bytes of JSON/),
      });
    });
  });

  describe("with oversizedRequests: 'refuse' (a command a user sent: the API answers 413)", () => {
    it('refuses a start whose first step would send it, and creates nothing', () => {
      const transition = createJob(MAPPED_FIRST, { id: ID, input: { l: numbers } }, REFUSE);
      expect(transition.rejected).toEqual({
        code: 'too_large',
        message: expect.stringMatching(/^step "plan": .*gives more than 1048576 bytes of JSON/),
      });
      expect(transition.changed).toBe(false);
      expect(transition.requests).toEqual([]);
      expect(transition.creates).toEqual([]);
    });

    it('refuses a start whose input is itself over the limit, without a mapping', () => {
      const plain = compiled(`workflows:
  - name: plain
    steps:
      - name: work
`);
      const transition = createJob(
        plain,
        { id: ID, input: { blob: 'x'.repeat(2_000) } },
        { ...REFUSE, maxRequestBytes: 1_000 },
      );
      expect(transition.rejected).toEqual({
        code: 'too_large',
        message: expect.stringMatching(/^step "work": the request is more than 1000 bytes of JSON/),
      });
      expect(transition.changed).toBe(false);
    });

    it('refuses a signal whose output would make the next step send it, and leaves the job as it was', () => {
      const started = createJob(SIGNALLED, { id: ID, input: {} }, { now: T0 });
      const signal = { type: 'signal', step: 'approve', output: { l: numbers } } as const;
      const refused = applyEvent(SIGNALLED, started.job, signal, REFUSE);
      expect(refused.rejected?.code).toBe('too_large');
      expect(refused.rejected?.message).toMatch(/^step "expand": /);
      expect(refused.changed).toBe(false);
      expect(refused.job).toBe(started.job);
      expect(stepsOf(refused.job).approve?.status).toBe('running');

      // A worker's reply or a timer would have failed the step that built the request instead.
      const failed = applyEvent(SIGNALLED, started.job, signal, { now: T0 });
      expect(stepsOf(failed.job).approve?.status).toBe('completed');
      expect(stepsOf(failed.job).expand?.status).toBe('failed');
    });

    it('refuses a start whose fan-out children would send it, and creates none of them', () => {
      const input = { elements: [1, 2], l: numbers };
      const transition = createJob(FANNED, { id: ID, input }, REFUSE);
      expect(transition.rejected).toMatchObject({
        code: 'too_large',
        message: expect.stringMatching(/^step "work": /),
      });
      expect(transition.creates).toEqual([]);
    });
  });
});
