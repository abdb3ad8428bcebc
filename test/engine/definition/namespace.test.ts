import { describe, expect, it } from 'vitest';
import { loadWorkflows } from '../../../engine/definition/load.js';
import {
  DEFAULT_NAMESPACE,
  definitionInNamespace,
  definitionShown,
  InvalidNameError,
  inNamespace,
  namespaceProblem,
  qualifiedName,
  queuePrefixProblem,
  resolveInCallerNamespace,
  splitQualifiedName,
} from '../../../engine/definition/namespace.js';
import { onFailureJobId } from '../../../engine/job/on-failure.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

describe('Rule: namespaces qualify workflow names', () => {
  it('keeps the plain name in default and qualifies it elsewhere, and splits it back', () => {
    expect(qualifiedName(DEFAULT_NAMESPACE, 'billing')).toBe('billing');
    expect(qualifiedName('team-a', 'billing')).toBe('team-a/billing');
    expect(splitQualifiedName('billing')).toEqual({ namespace: 'default', name: 'billing' });
    expect(splitQualifiedName('team-a/billing')).toEqual({ namespace: 'team-a', name: 'billing' });
    expect(inNamespace('team-a/billing', 'team-a')).toBe(true);
    expect(inNamespace('team-a/billing', 'default')).toBe(false);
    expect(inNamespace('billing', 'default')).toBe(true);
  });

  it.each([
    ["another namespace's stored name", 'team-b/billing'],
    ['a path segment', '..'],
    ['a dot', '.'],
    ['an empty name', ''],
    ['a fullwidth solidus', 'team-b\uff0fbilling'],
    ['a division slash', 'team-b\u2215billing'],
    ['a percent-encoded slash', 'team-b%2Fbilling'],
    ['a leading digit', '9lives'],
  ])('refuses to qualify %s, in default as in any other namespace', (_, name) => {
    for (const namespace of [DEFAULT_NAMESPACE, 'team-a']) {
      expect(() => qualifiedName(namespace, name), `${namespace}: ${name}`).toThrow(InvalidNameError);
    }
  });

  it('refuses to qualify a name in a namespace that is not one', () => {
    expect(() => qualifiedName('team-a/x', 'billing')).toThrow(/holds a "\/"/);
    expect(() => qualifiedName('..', 'billing')).toThrow(InvalidNameError);
  });

  it('refuses a namespace with a slash, bad characters, or none, and says why', () => {
    expect(namespaceProblem('team-a')).toBeUndefined();
    expect(namespaceProblem('a/b')).toMatch(/holds a "\/"/);
    expect(namespaceProblem('9lives')).toMatch(/not valid/);
    expect(namespaceProblem('has space')).toMatch(/not valid/);
    expect(namespaceProblem('')).toMatch(/non-empty/);
    expect(namespaceProblem(7)).toMatch(/non-empty string/);
    expect(namespaceProblem('a'.repeat(65))).toMatch(/at most 64/);
  });

  it('resolves a called or onFailure workflow in the caller namespace', () => {
    expect(resolveInCallerNamespace('team-a/billing', 'notify')).toBe('team-a/notify');
    expect(resolveInCallerNamespace('billing', 'notify')).toBe('notify');
  });

  it('registers a definition under its qualified name, prefixing only the steps that send to a queue', () => {
    const { workflows } = loadWorkflows(`workflows:
  - name: billing
    onFailure: notify
    steps:
      - name: charge
      - name: mail
        queue: mailer
      - name: approve
        type: signal
        depends: [charge]
      - name: sub
        workflow: notify
      - name: each
        task: lines
    tasks:
      - name: lines
        itemListKey: items
        steps:
          - name: line
`);
    const stored = definitionInNamespace(workflows[0]!, 'team-a', 'team-a.');
    expect(stored.name).toBe('team-a/billing');
    expect(stored.onFailure).toBe('notify');
    expect(stored.steps.map((step) => step.queue)).toEqual([
      'team-a.charge',
      'team-a.mailer',
      undefined,
      undefined,
      undefined,
    ]);
    expect(stored.tasks?.[0]?.steps[0]?.queue).toBe('team-a.line');
    expect(definitionShown(stored).name).toBe('billing');
    expect(definitionInNamespace(workflows[0]!, 'default')).toEqual(workflows[0]);
  });

  it("takes a file's namespace and queue prefix, and refuses bad ones with nothing loaded", () => {
    const good = loadWorkflows(
      'namespace: team-a\nqueuePrefix: team-a.\nworkflows:\n  - name: w\n    steps: [{name: s}]\n',
    );
    expect(good.errors).toEqual([]);
    expect(good).toMatchObject({ namespace: 'team-a', queuePrefix: 'team-a.' });
    const bad = loadWorkflows(
      'namespace: a/b\nqueuePrefix: "amq."\nworkflows:\n  - name: w\n    steps: [{name: s}]\n',
    );
    expect(bad.workflows).toEqual([]);
    expect(bad.errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/"namespace": namespace "a\/b" holds a "\/"/),
      expect.stringMatching(/"queuePrefix": .*amq\./),
    ]);
    expect(queuePrefixProblem('bad prefix')).toMatch(/letters, digits/);
  });
});

describe('Rules: calls and onFailure stay inside the namespace', () => {
  const FLOWS = `workflows:
  - name: charge
    onFailure: notify
    steps:
      - name: charge-card
  - name: notify
    steps:
      - name: send-mail
`;

  it('starts the onFailure workflow of the failed job namespace, not the default one', async () => {
    // Prepare
    const w = new SimulatedWorld();
    const { workflows } = loadWorkflows(FLOWS);
    for (const workflow of workflows) {
      await w.manager.registerWorkflow(workflow);
      await w.manager.registerWorkflow(definitionInNamespace(workflow, 'team-a'));
    }
    const id = await w.start('team-a/charge', {});
    // Act
    await w.reply(w.take()[0]!, { error: 'declined' }, { type: 'error' });
    // Assess
    expect((await w.job(onFailureJobId(id, 1))).workflow).toBe('team-a/notify');
  });

  it('runs a workflow: step job in the caller namespace', async () => {
    const w = new SimulatedWorld();
    const { workflows } = loadWorkflows(`workflows:
  - name: outer
    steps:
      - name: call
        workflow: inner
  - name: inner
    steps:
      - name: work
`);
    for (const workflow of workflows)
      await w.manager.registerWorkflow(definitionInNamespace(workflow, 'team-b'));
    const id = await w.start('team-b/outer', {});
    const called = (await w.job(id)).steps.find((step) => step.name === 'call')?.job;
    expect((await w.job(called!)).workflow).toBe('team-b/inner');
  });
});
