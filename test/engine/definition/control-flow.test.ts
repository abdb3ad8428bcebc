import { describe, expect, it } from 'vitest';
import { formatDefinitionError, loadWorkflows } from '../../../engine/index.js';

const errorsOf = (yaml: string) =>
  loadWorkflows(yaml, { file: 'flows.yaml' }).errors.map(formatDefinitionError);

const withStep = (keys: string, workflowKeys = '') => `workflows:
  - name: w
${workflowKeys}    steps:
      - name: a
${keys}`;

describe('Validation of control flow keys', () => {
  it('accepts when, input, params, continueOnError and onFailure, and keeps them', () => {
    const { workflows, errors } = loadWorkflows(
      withStep(
        `        when: input.total > 100
        input: '{"total": input.total}'
        params: { currency: EUR }
        continueOnError: true
`,
        `    onFailure: notify
    params: { region: eu }
`,
      ),
    );
    expect(errors).toEqual([]);
    expect(workflows[0]).toEqual({
      name: 'w',
      params: { region: 'eu' },
      onFailure: 'notify',
      steps: [
        {
          name: 'a',
          when: 'input.total > 100',
          input: '{"total": input.total}',
          params: { currency: 'EUR' },
          continueOnError: true,
        },
      ],
    });
  });

  it('names the file, line, workflow, step and key of an expression with a syntax error, and where in it', () => {
    const [error] = errorsOf(withStep('        when: input.total >\n'));
    expect(error).toMatch(/^flows\.yaml:5: workflow "w", step "a": "when" expression "input\.total >"/);
    expect(error).toMatch(/column \d+/);
  });

  it.each([
    ['an unknown variable', '        when: order.total > 1\n', 'order'],
    ['a boolean written bare', '        when: true\n', 'write it in quotes'],
    ['a list', '        when: [ a ]\n', 'must be a CEL expression'],
  ])('refuses a when with %s', (_, keys, fragment) => {
    const errors = errorsOf(withStep(keys));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(fragment);
  });

  it.each([
    ['params that are not a mapping', '        params: [ 1 ]\n', '"params" must be a mapping'],
    ['continueOnError that is not a boolean', '        continueOnError: "yes"\n', 'true or false'],
    ['an empty input expression', '        input: ""\n', 'must be a CEL expression'],
  ])('refuses %s', (_, keys, fragment) => {
    const errors = errorsOf(withStep(keys));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(fragment);
  });

  it('refuses an onFailure that names the workflow itself', () => {
    const errors = errorsOf(withStep('', '    onFailure: w\n'));
    expect(errors).toEqual([
      'flows.yaml:3: workflow "w": "onFailure" names the workflow itself: a failing handler would start itself again and again',
    ]);
  });
});

describe('Validation of workflow: steps', () => {
  it('accepts a call with a version and keeps it', () => {
    const { workflows, errors } = loadWorkflows(withStep('        workflow: payment\n        version: 3\n'));
    expect(errors).toEqual([]);
    expect(workflows[0]?.steps[0]).toEqual({ name: 'a', workflow: 'payment', version: 3 });
  });

  it.each([
    ['a workflow that calls itself', '        workflow: w\n', 'may not call itself'],
    [
      'workflow and task on one step',
      '        workflow: x\n        task: t\n',
      '"workflow" and "task" on one step',
    ],
    ['a queue on a call', '        workflow: x\n        queue: q\n', '"queue" does not apply'],
    ['a version without a workflow', '        version: 2\n', '"version" applies only with "workflow"'],
    ['a version that is not a whole number', '        workflow: x\n        version: 1.5\n', 'whole number'],
  ])('refuses %s', (_, keys, fragment) => {
    const errors = errorsOf(withStep(keys));
    expect(errors.some((error) => error.includes(fragment))).toBe(true);
  });
});
