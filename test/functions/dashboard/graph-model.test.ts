import { describe, expect, it } from 'vitest';
import type { JobDocument, WorkflowDefinition } from '../../../functions/dashboard/src/api-types.js';
import {
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
});

describe('Function: jobGraph', () => {
  it("colours each step by its state and carries a fan-out step's counts", () => {
    // Prepare
    const job = jobDocument({
      'book-split': { status: 'completed', attempts: 1 },
      'section-counts': { status: 'running', attempts: 1, children: 12, childrenDone: 7, childrenFailed: 1 },
      'sum-splits': { status: 'waiting', attempts: 0 },
      'store-title': { status: 'failed', attempts: 3 },
      approve: { status: 'waiting', attempts: 0 },
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
        'segment-word-counts': { status: 'completed', attempts: 1 },
        tidy: { status: 'running', attempts: 1 },
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
    const odd = jobDocument({ mystery: { status: 'running', attempts: 1 } });
    expect(jobGraph(WORKFLOW, odd).nodes.map((node) => node.step)).toEqual(['mystery']);
  });
});
