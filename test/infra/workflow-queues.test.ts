import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkStepQueueNames, sqsQueueName } from '../../infra/queue-names.js';
import { readDeployedWorkflows, stepQueuesOf } from '../../infra/workflow-queues.js';
import { FIXTURE_WORKFLOWS } from './synth-stack.js';

function writeWorkflows(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-infra-')), 'workflows.yaml');
  writeFileSync(file, text);
  return file;
}

describe('readDeployedWorkflows', () => {
  test('returns the definitions and the sorted, distinct queues of worker steps in workflows and tasks', () => {
    // Act
    const deployed = readDeployedWorkflows({ file: FIXTURE_WORKFLOWS, explicit: true });

    // Assess
    expect(deployed.definitions.map((workflow) => workflow.name)).toEqual(['book-word-counts', 'quick-sum']);
    // `approve` is a signal step and `section-counts` a fan-out step: neither receives requests.
    expect(deployed.stepQueues).toEqual(['book-split', 'summing', 'word-counter']);
    expect(deployed.file).toMatch(/fixtures\/workflows\.yaml$/);
  });

  test("a file's namespace goes with the definitions, and its queue prefix into their step queues", () => {
    // Prepare
    const file = writeWorkflows(
      'namespace: team-a\nqueuePrefix: team-a-\nworkflows:\n  - name: billing\n    steps:\n      - name: charge\n      - name: ok\n        type: signal\n',
    );

    // Act
    const deployed = readDeployedWorkflows({ file, explicit: true });

    // Assess
    expect(deployed.namespace).toBe('team-a');
    expect(deployed.definitions.map((workflow) => workflow.name)).toEqual(['billing']);
    expect(deployed.stepQueues).toEqual(['team-a-charge']);
  });

  test('a missing default file means no workflows', () => {
    expect(readDeployedWorkflows({ file: 'no/such/workflows.yaml', explicit: false })).toEqual({
      definitions: [],
      stepQueues: [],
    });
  });

  test('a missing explicit file is an error naming it', () => {
    expect(() => readDeployedWorkflows({ file: 'no/such/workflows.yaml', explicit: true })).toThrow(
      /^-c workflows=no\/such\/workflows\.yaml: no such file/,
    );
  });

  test("an invalid file fails with the loader's errors, one per line with file and line", () => {
    // Prepare
    const file = writeWorkflows(
      'workflows:\n  - name: broken\n    steps:\n      - name: a\n        depends: [nope]\n      - nam: b\n',
    );

    // Act
    const read = () => readDeployedWorkflows({ file, explicit: true });

    // Assess
    expect(read).toThrow(
      /are not valid:\n {2}.*workflows\.yaml:\d+: workflow "broken".*\n {2}.*workflows\.yaml:\d+/,
    );
  });
});

describe('stepQueuesOf', () => {
  test('a step without `queue:` uses its name; explicit queues are shared', () => {
    const queues = stepQueuesOf([
      { name: 'w1', steps: [{ name: 'b' }, { name: 'a', queue: 'shared' }] },
      { name: 'w2', steps: [{ name: 'c', queue: 'shared' }] },
    ]);
    expect(queues).toEqual(['b', 'shared']);
  });
});

describe('queue names', () => {
  test('SQS names are checked at synth, with the prefix', () => {
    expect(sqsQueueName('Switchyard-', 'book-split')).toBe('Switchyard-book-split');
    expect(() => sqsQueueName('Switchyard-', 'orders.v2')).toThrow(
      /queue "orders.v2" cannot be an SQS queue/,
    );
    expect(() => sqsQueueName('Switchyard-', 'x'.repeat(80))).toThrow(/1 to 80/);
  });

  test("a step queue may not take one of the manager's own queue names", () => {
    expect(() => checkStepQueueNames(['ok', 'workflow-manager'])).toThrow(/"workflow-manager" is reserved/);
    expect(() => checkStepQueueNames(['switchyard-timers'])).toThrow(/reserved/);
    expect(() => checkStepQueueNames(['ok'])).not.toThrow();
  });
});
