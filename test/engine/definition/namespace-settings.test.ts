import { describe, expect, it } from 'vitest';
import {
  type NamespaceSettings,
  namespaceRuleProblems,
  namespaceSettingsProblems,
  vhostProblem,
} from '../../../engine/definition/namespace-settings.js';
import type { WorkflowDefinition } from '../../../engine/definition/types.js';

const settings = (namespace: string, more: Partial<NamespaceSettings> = {}): NamespaceSettings => ({
  namespace,
  updatedAt: 0,
  ...more,
});

const workflow = (name: string, queue: string, vhosts?: string[]): WorkflowDefinition => ({
  name,
  steps: [
    { name: 'charge', queue },
    { name: 'approve', type: 'signal' },
  ],
  ...(vhosts ? { vhosts } : {}),
});

describe('Namespace settings: what only the operator decides (engine/definition/namespace-settings.ts)', () => {
  const teamB = settings('team-b', { queuePrefix: 'team-b.' });

  it("refuses a prefix that is another namespace's, or begins or is begun by one", () => {
    expect(namespaceSettingsProblems(settings('team-a', { queuePrefix: 'team-b.' }), [teamB])).toEqual([
      `queue prefix "team-b." overlaps namespace "team-b"'s "team-b.": no queue may belong to two namespaces`,
    ]);
    expect(namespaceSettingsProblems(settings('team-a', { queuePrefix: 'team-' }), [teamB])).toHaveLength(1);
    expect(namespaceSettingsProblems(settings('team-a', { queuePrefix: 'team-b.x.' }), [teamB])).toHaveLength(
      1,
    );
    expect(namespaceSettingsProblems(settings('team-a', { queuePrefix: 'team-a.' }), [teamB])).toEqual([]);
    // A namespace's own earlier prefix is no overlap.
    expect(namespaceSettingsProblems(settings('team-b', { queuePrefix: 'team-b.v2.' }), [teamB])).toEqual([]);
  });

  it("refuses a prefix named like the manager's queues, and vhost names RabbitMQ refuses", () => {
    expect(namespaceSettingsProblems(settings('team-a', { queuePrefix: 'switchyard.' }), [])).toEqual([
      expect.stringContaining(`named like the manager's own queues`),
    ]);
    expect(namespaceSettingsProblems(settings('team-a', { vhosts: ['ok', ' '] }), [])).toEqual([
      '"vhost" must be a vhost name, got a blank one',
    ]);
    expect(namespaceSettingsProblems(settings('a/b'), [])).toEqual([expect.stringContaining('holds a "/"')]);
  });

  it("refuses a step queue outside the namespace's prefix, under another's, or of the manager", () => {
    const all = [settings('team-a', { queuePrefix: 'team-a.' }), teamB];
    expect(namespaceRuleProblems(workflow('team-a/billing', 'team-a.charge'), all)).toEqual([]);
    expect(namespaceRuleProblems(workflow('team-a/billing', 'team-b.charge'), all)).toEqual([
      {
        workflow: 'team-a/billing',
        step: 'charge',
        message: `queue "team-b.charge" does not start with namespace "team-a"'s queue prefix "team-a."`,
      },
    ]);
    // A namespace without a prefix (default here) may not use another's either.
    expect(namespaceRuleProblems(workflow('billing', 'team-b.charge'), all)).toEqual([
      expect.objectContaining({
        message: `queue "team-b.charge" starts with "team-b.", the queue prefix of another namespace`,
      }),
    ]);
    expect(namespaceRuleProblems(workflow('billing', 'workflow-manager.dead-letters'), all)).toEqual([
      expect.objectContaining({ message: expect.stringContaining("named like the manager's own queues") }),
    ]);
    expect(namespaceRuleProblems(workflow('billing', 'replies.dead-letters'), all, 'replies')).toHaveLength(
      1,
    );
  });

  it('lets default use any vhost until the operator lists some, and every other namespace none', () => {
    expect(vhostProblem('default', undefined, 'billing')).toBeUndefined();
    expect(vhostProblem('default', settings('default', { vhosts: ['/'] }), 'billing')).toMatch(
      `vhost "billing" is not among namespace "default"'s allowed vhosts ("/")`,
    );
    expect(vhostProblem('team-a', undefined, 'billing')).toMatch(
      'vhost "billing" is not allowed in namespace "team-a"',
    );
    expect(vhostProblem('team-a', settings('team-a', { vhosts: ['billing'] }), 'billing')).toBeUndefined();
    expect(namespaceRuleProblems(workflow('team-a/w', 'q', ['billing']), [])).toEqual([
      expect.objectContaining({ message: expect.stringContaining('not allowed in namespace "team-a"') }),
    ]);
  });
});
