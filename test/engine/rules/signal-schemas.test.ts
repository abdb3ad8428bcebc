import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/index.js';
import { refusal } from '../../support/refusal.js';
import { SimulatedWorld, workflowsFrom } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const FLOW = `workflows:
  - name: approval
    steps:
      - name: prepare
      - name: approve
        type: signal
        depends: [ prepare ]
        signal:
          schema:
            type: object
            required: [ decision ]
            properties:
              decision: { enum: [ approve, reject ], title: Decision }
              comment: { type: string }
`;

describe('Rules: a signal step with a schema takes only bodies that meet it', () => {
  it('refuses a body that does not meet the schema (400, naming each problem) and changes nothing, taken or kept', async () => {
    const w = new SimulatedWorld();
    await w.register(FLOW);
    const id = await w.start('approval', {});
    const before = await w.job(id);
    expect(await refusal(w.manager.signal(id, 'approve', { comment: 'ok' }))).toEqual({
      code: 'invalid',
      message: `the signal for step "approve" does not meet its schema: must have required property 'decision'`,
    });
    expect(await refusal(w.manager.signal(id, 'approve', { decision: 'maybe', comment: 3 }))).toEqual({
      code: 'invalid',
      message:
        'the signal for step "approve" does not meet its schema: decision must be equal to one of the allowed values ("approve", "reject"); comment must be string',
    });
    expect((await w.job(id)).rev).toBe(before.rev);
    // Early and valid: kept, then taken.
    expect((await w.manager.signal(id, 'approve', { decision: 'approve' })).kept).toBeDefined();
    await w.reply(w.take()[0]!, { doc: 1 });
    expect(stepsOf(await w.job(id)).approve).toMatchObject({
      status: 'completed',
      output: { doc: 1, decision: 'approve' },
    });
  });

  it('refuses to register a workflow whose signal schema is not a JSON Schema', async () => {
    const w = new SimulatedWorld();
    const [workflow] = workflowsFrom(FLOW.replace('type: object\n', 'type: objekt\n'));
    await expect(w.manager.registerWorkflow(workflow!)).rejects.toThrow(
      /step "approve": "signal.schema" is not a JSON Schema: schema is invalid/,
    );
  });

  it('validation: "signal" belongs on a signal step and holds a schema', () => {
    const messages = (yaml: string) => loadWorkflows(yaml).errors.map((error) => error.message);
    expect(
      messages('workflows:\n  - name: w\n    steps:\n      - name: s\n        signal: { schema: {} }\n').join(
        '\n',
      ),
    ).toContain('"signal" applies to a signal step only (type: signal)');
    expect(
      messages(
        'workflows:\n  - name: w\n    steps:\n      - name: s\n        type: signal\n        signal: { schema: 3 }\n',
      ).join('\n'),
    ).toContain(`"signal" must be { schema: <a JSON Schema of the signal's body> }`);
  });
});
