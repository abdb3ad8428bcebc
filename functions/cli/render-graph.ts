import type { StepDefinition, WorkflowDefinition } from '../../engine/index.js';

export type GraphFormat = 'mermaid' | 'dot';

const id = (scope: string, step: string) => `${scope}__${step}`.replace(/[^A-Za-z0-9_]/g, '_');

/** The DAG of a workflow and its tasks, as Mermaid or Graphviz DOT. */
export function renderGraph(workflow: WorkflowDefinition, format: GraphFormat): string {
  return format === 'dot' ? renderDot(workflow) : renderMermaid(workflow);
}

function label(step: StepDefinition): string {
  const notes: string[] = [];
  if (step.queue) notes.push(`queue ${step.queue}`);
  if (step.type === 'signal') notes.push('signal');
  if (step.task) notes.push(`for each: ${step.task}`);
  if (step.retries) notes.push(`retries ${step.retries}`);
  if (step.timeout) notes.push(`timeout ${step.timeout}`);
  return notes.length ? `${step.name}\\n(${notes.join(', ')})` : step.name;
}

function renderMermaid(workflow: WorkflowDefinition): string {
  const lines = ['flowchart TD'];
  const scope = (name: string, steps: StepDefinition[], indent: string) => {
    for (const step of steps) {
      const text = label(step).replaceAll('\\n', '<br/>').replaceAll('"', "'");
      const shape = step.task ? `[["${text}"]]` : step.type === 'signal' ? `{{"${text}"}}` : `["${text}"]`;
      lines.push(`${indent}${id(name, step.name)}${shape}`);
    }
    for (const step of steps)
      for (const dependency of step.depends ?? [])
        lines.push(`${indent}${id(name, dependency)} --> ${id(name, step.name)}`);
  };
  scope(workflow.name, workflow.steps, '  ');
  for (const task of workflow.tasks ?? []) {
    lines.push(
      `  subgraph ${id('task', task.name)}["task ${task.name}: each of ${task.itemListKey}${task.concurrency ? `, ${task.concurrency} at a time` : ''}"]`,
    );
    scope(task.name, task.steps, '    ');
    lines.push('  end');
  }
  const owners = [{ name: workflow.name, steps: workflow.steps }, ...(workflow.tasks ?? [])];
  for (const owner of owners) {
    for (const step of owner.steps)
      if (step.task) lines.push(`  ${id(owner.name, step.name)} -.-> ${id('task', step.task)}`);
  }
  return `${lines.join('\n')}\n`;
}

function renderDot(workflow: WorkflowDefinition): string {
  const quote = (text: string) => `"${text.replaceAll('"', '\\"')}"`;
  const lines = [`digraph ${quote(workflow.name)} {`, '  rankdir=TB;', '  node [shape=box, style=rounded];'];
  const scope = (name: string, steps: StepDefinition[], indent: string) => {
    for (const step of steps) {
      const shape = step.task ? ', shape=box3d' : step.type === 'signal' ? ', shape=hexagon' : '';
      lines.push(`${indent}${id(name, step.name)} [label=${quote(label(step))}${shape}];`);
    }
    for (const step of steps)
      for (const dependency of step.depends ?? [])
        lines.push(`${indent}${id(name, dependency)} -> ${id(name, step.name)};`);
  };
  scope(workflow.name, workflow.steps, '  ');
  for (const task of workflow.tasks ?? []) {
    lines.push(`  subgraph ${quote(`cluster_${task.name}`)} {`);
    lines.push(`    label=${quote(`task ${task.name}: each of ${task.itemListKey}`)};`);
    scope(task.name, task.steps, '    ');
    lines.push('  }');
  }
  const owners = [{ name: workflow.name, steps: workflow.steps }, ...(workflow.tasks ?? [])];
  for (const owner of owners) {
    for (const step of owner.steps) {
      const first = (workflow.tasks ?? []).find((task) => task.name === step.task)?.steps[0];
      if (step.task && first)
        lines.push(
          `  ${id(owner.name, step.name)} -> ${id(step.task, first.name)} [style=dashed, lhead=${quote(`cluster_${step.task}`)}];`,
        );
    }
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
