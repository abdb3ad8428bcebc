import { describe, expect, it } from 'vitest';
import type { JobDocument, WorkflowDefinition } from '../../../functions/dashboard/src/api-types.js';
import {
  callLabel,
  handlesError,
  jobGraph,
  jobSteps,
  stepNotes,
  workflowGraph,
} from '../../../functions/dashboard/src/graph-model.js';

/** The word-count example, plus a signal step and a queue of its own. */
const WORKFLOW: WorkflowDefinition = {
  name: 'book-word-counts',
  steps: [
    { name: 'book-split' },
    { name: 'section-counts', task: 'word-counts', depends: ['book-split'] },
    { name: 'sum-splits', depends: ['section-counts'], queue: 'summing', retries: 2 },
    { name: 'store-title' },
    { name: 'approve', type: 'signal', depends: ['sum-splits'] },
  ],
  tasks: [
    {
      name: 'word-counts',
      itemListKey: 'sections',
      concurrency: 4,
      steps: [{ name: 'segment-word-counts' }, { name: 'tidy', depends: ['segment-word-counts'] }],
    },
  ],
};

function jobDocument(
  steps: JobDocument['steps'],
  parent: string | null = null,
): Pick<JobDocument, 'parent' | 'steps'> {
  return { parent, steps };
}

describe('Function: workflowGraph', () => {
  it('draws every step, the tasks as clusters, and fan-out edges into each task', () => {
    // Act
    const graph = workflowGraph(WORKFLOW);

    // Assess
    expect(graph.nodes.map((node) => [node.id, node.kind, node.cluster])).toEqual([
      ['step:book-split', 'step', undefined],
      ['step:section-counts', 'fan-out', undefined],
      ['step:sum-splits', 'step', undefined],
      ['step:store-title', 'step', undefined],
      ['step:approve', 'signal', undefined],
      ['task:word-counts:segment-word-counts', 'step', 'cluster:word-counts'],
      ['task:word-counts:tidy', 'step', 'cluster:word-counts'],
    ]);
    expect(graph.edges).toEqual([
      { from: 'step:book-split', to: 'step:section-counts', kind: 'depends' },
      { from: 'step:section-counts', to: 'step:sum-splits', kind: 'depends' },
      { from: 'step:sum-splits', to: 'step:approve', kind: 'depends' },
      { from: 'task:word-counts:segment-word-counts', to: 'task:word-counts:tidy', kind: 'depends' },
      { from: 'step:section-counts', to: 'task:word-counts:segment-word-counts', kind: 'fan-out' },
    ]);
    expect(graph.clusters).toEqual([
      { id: 'cluster:word-counts', label: 'task word-counts: once per section, 4 at a time' },
    ]);
  });

  it('notes what each step does', () => {
    const tasks = WORKFLOW.tasks ?? [];
    const notes = WORKFLOW.steps.map((step) => stepNotes(step, tasks));
    expect(notes).toEqual([
      ['queue book-split'],
      ['each of sections → word-counts'],
      ['queue summing', 'retries 2'],
      ['queue store-title'],
      ['waits for a signal'],
    ]);
  });

  it('says what a step that needs no worker does, and a loop until when', () => {
    expect(stepNotes({ name: 'wait', sleep: '10m' })).toEqual(['sleeps 10m']);
    expect(stepNotes({ name: 'stop', fail: { message: 'input.why' } })).toEqual(['fails the job']);
    expect(stepNotes({ name: 'shape', output: '{"a": 1}' })).toEqual(['passes its input on, reshaped']);
    expect(stepNotes({ name: 'poll', repeat: { until: 'output.done', max: 5 } })).toEqual([
      'queue poll',
      'repeats until output.done (at most 5)',
    ]);
  });

  it('shows a join rule other than the default', () => {
    expect(stepNotes({ name: 'publish', depends: ['approve'], join: 'none_failed' })).toEqual([
      'queue publish',
      'join none_failed',
    ]);
  });
});

describe('Function: jobGraph', () => {
  it('marks the steps that wait for someone: a signal step, a step its worker suspended', () => {
    const job = {
      ...jobDocument({
        'book-split': { status: 'completed', attempt: 1, attempts: [] },
        'section-counts': { status: 'waiting', attempt: 0, attempts: [] },
        'sum-splits': { status: 'waiting', attempt: 0, attempts: [] },
        'store-title': { status: 'suspended', attempt: 1, attempts: [], suspendNote: 'ask' },
        approve: { status: 'running', attempt: 1, attempts: [] },
      }),
      waitingFor: [
        { step: 'store-title', kind: 'suspended' as const, since: '2026-01-01T00:00:00.000Z', note: 'ask' },
        { step: 'approve', kind: 'signal' as const, since: '2026-01-01T00:00:00.000Z' },
      ],
    };
    const nodes = jobGraph(WORKFLOW, job).nodes;
    expect(nodes.map((node) => [node.step, node.state, node.awaiting])).toEqual([
      ['book-split', 'completed', undefined],
      ['section-counts', 'waiting', undefined],
      ['sum-splits', 'waiting', undefined],
      ['store-title', 'suspended', 'suspended'],
      ['approve', 'running', 'signal'],
    ]);
  });

  it("colours each step by its state and carries a fan-out step's counts", () => {
    // Prepare
    const job = jobDocument({
      'book-split': { status: 'completed', attempt: 1, attempts: [] },
      'section-counts': {
        status: 'running',
        attempt: 1,
        attempts: [],
        children: 12,
        childrenDone: 7,
        childrenFailed: 1,
      },
      'sum-splits': { status: 'waiting', attempt: 0, attempts: [] },
      'store-title': { status: 'failed', attempt: 3, attempts: [] },
      approve: { status: 'waiting', attempt: 0, attempts: [] },
    });

    // Act
    const graph = jobGraph(WORKFLOW, job);

    // Assess
    expect(graph.clusters).toEqual([]);
    expect(graph.nodes.map((node) => [node.step, node.state, node.attempts, node.children])).toEqual([
      ['book-split', 'completed', 1, undefined],
      ['section-counts', 'running', 1, { done: 7, total: 12, failed: 1 }],
      ['sum-splits', 'waiting', 0, undefined],
      ['store-title', 'failed', 3, undefined],
      ['approve', 'waiting', 0, undefined],
    ]);
    expect(graph.edges).toHaveLength(3);
  });

  it("draws a child job with its task's steps", () => {
    const child = jobDocument(
      {
        'segment-word-counts': { status: 'completed', attempt: 1, attempts: [] },
        tidy: { status: 'running', attempt: 1, attempts: [] },
      },
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    expect(jobSteps(WORKFLOW, child).task?.name).toBe('word-counts');
    const graph = jobGraph(WORKFLOW, child);
    expect(graph.nodes.map((node) => [node.id, node.state])).toEqual([
      ['step:segment-word-counts', 'completed'],
      ['step:tidy', 'running'],
    ]);
    expect(graph.edges).toEqual([{ from: 'step:segment-word-counts', to: 'step:tidy', kind: 'depends' }]);
  });

  it('still draws the steps of a job whose definition does not match', () => {
    const odd = jobDocument({ mystery: { status: 'running', attempt: 1, attempts: [] } });
    expect(jobGraph(WORKFLOW, odd).nodes.map((node) => node.step)).toEqual(['mystery']);
  });
});

/** A checkout with the control-flow keys: a handled failure and its two branches, a call. */
const CHECKOUT: WorkflowDefinition = {
  name: 'checkout',
  onFailure: 'notify-ops',
  steps: [
    { name: 'charge', queue: 'payments', continueOnError: true },
    { name: 'refund', depends: ['charge'], when: 'has(input.error)' },
    { name: 'ship', depends: ['charge'], when: '!has(input.error)' },
    { name: 'pay', depends: ['ship'], workflow: 'payment', version: 3 },
    { name: 'audit', depends: ['refund', 'pay'], workflow: 'audit' },
  ],
};

describe('Function: workflowGraph, control flow', () => {
  it('draws calls as their own kind, the error branch as its own edge, and notes conditions', () => {
    // Act
    const graph = workflowGraph(CHECKOUT);

    // Assess
    expect(graph.nodes.map((node) => [node.step, node.kind, node.when, node.continueOnError])).toEqual([
      ['charge', 'step', undefined, true],
      ['refund', 'step', 'has(input.error)', undefined],
      ['ship', 'step', '!has(input.error)', undefined],
      ['pay', 'call', undefined, undefined],
      ['audit', 'call', undefined, undefined],
    ]);
    expect(graph.edges).toEqual([
      { from: 'step:charge', to: 'step:refund', kind: 'error' },
      { from: 'step:charge', to: 'step:ship', kind: 'depends' },
      { from: 'step:ship', to: 'step:pay', kind: 'depends' },
      { from: 'step:refund', to: 'step:audit', kind: 'depends' },
      { from: 'step:pay', to: 'step:audit', kind: 'depends' },
    ]);
    expect(graph.nodes.map((node) => node.notes)).toEqual([
      ['queue payments', 'continues on error'],
      ['queue refund', 'when has(input.error)'],
      ['queue ship', 'when !has(input.error)'],
      ['calls payment v3'],
      ['calls audit (latest)'],
    ]);
  });

  it('draws no error edge from a step that does not continue on error', () => {
    const graph = workflowGraph({
      name: 'w',
      steps: [{ name: 'a' }, { name: 'b', depends: ['a'], when: 'has(input.error)' }],
    });
    expect(graph.edges).toEqual([{ from: 'step:a', to: 'step:b', kind: 'depends' }]);
  });
});

describe('Function: jobGraph, control flow', () => {
  it('marks a handled failure, a skipped step and the job a call step runs', () => {
    const graph = jobGraph(
      CHECKOUT,
      jobDocument({
        charge: { status: 'failed', attempt: 1, attempts: [], handled: true, error: 'declined' },
        refund: { status: 'completed', attempt: 1, attempts: [] },
        ship: {
          status: 'skipped',
          attempt: 0,
          attempts: [],
          skipReason: '"when" is false: !has(input.error)',
        },
        pay: {
          status: 'skipped',
          attempt: 0,
          attempts: [],
          skipReason: 'every step it depends on was skipped',
        },
        audit: { status: 'running', attempt: 1, attempts: [], job: '0f8fad5b-d9cb-469f-a165-70867728950e' },
      }),
    );
    expect(graph.nodes.map((node) => [node.step, node.state, node.handled, node.job])).toEqual([
      ['charge', 'failed', true, undefined],
      ['refund', 'completed', undefined, undefined],
      ['ship', 'skipped', undefined, undefined],
      ['pay', 'skipped', undefined, undefined],
      ['audit', 'running', undefined, '0f8fad5b-d9cb-469f-a165-70867728950e'],
    ]);
    expect(graph.edges.filter((edge) => edge.kind === 'error')).toEqual([
      { from: 'step:charge', to: 'step:refund', kind: 'error' },
    ]);
  });
});

describe('Functions: callLabel and handlesError', () => {
  it('names the called workflow and its version', () => {
    expect(callLabel({ workflow: 'payment', version: 3 })).toBe('calls payment v3');
    expect(callLabel({ workflow: 'payment' })).toBe('calls payment (latest)');
    expect(callLabel({})).toBeUndefined();
  });

  it('finds the handler branch: has(input.error), not negated', () => {
    expect(handlesError({ when: 'has(input.error)' })).toBe(true);
    expect(handlesError({ when: 'input.retry && has(input.error)' })).toBe(true);
    expect(handlesError({ when: '!has(input.error)' })).toBe(false);
    expect(handlesError({})).toBe(false);
  });
});
