import {
  type StepDefinition,
  type StepKind,
  stepKindOf,
  type WorkflowDefinition,
} from '../../engine/index.js';

export type GraphFormat = 'mermaid' | 'dot';

const id = (scope: string, step: string) => `${scope}__${step}`.replace(/[^A-Za-z0-9_]/g, '_');

/** The DAG of a workflow and its tasks, as Mermaid or Graphviz DOT. */
export function renderGraph(workflow: WorkflowDefinition, format: GraphFormat): string {
  return format === 'dot' ? renderDot(workflow) : renderMermaid(workflow);
}

/**
 * A dependent of a `continueOnError` step whose `when` tests for the handed-on error (`has(input.error)`,
 * not negated): the handler branch, drawn as the "on error" edge. Its sibling with `!has(input.error)`
 * is the normal branch, drawn as any edge.
 */
export function handlesError(step: StepDefinition): boolean {
  return step.when !== undefined && /(?<!!\s*)\bhas\(\s*input\.error\s*\)/.test(step.when);
}

/** "calls payment v3", or "calls payment (latest)" when the step names no version. */
export function callLabel(step: StepDefinition): string | undefined {
  if (!step.workflow) return undefined;
  return `calls ${step.workflow} ${step.version ? `v${step.version}` : '(latest)'}`;
}

/** Each kind of step's node: Mermaid's shape around its text, and Graphviz's shape. */
const MERMAID_SHAPES: Record<StepKind, (text: string) => string> = {
  fanout: (text) => `[["${text}"]]`,
  signal: (text) => `{{"${text}"}}`,
  call: (text) => `(["${text}"])`,
  worker: (text) => `["${text}"]`,
  sleep: (text) => `[/"${text}"/]`,
  fail: (text) => `[\\"${text}"\\]`,
  pass: (text) => `>"${text}"]`,
};

const DOT_SHAPES: Record<StepKind, string | undefined> = {
  fanout: 'box3d',
  signal: 'hexagon',
  call: 'component',
  worker: undefined,
  sleep: 'parallelogram',
  fail: 'octagon',
  pass: 'cds',
};

/** A node's text, line by line: name, short facts, then what the control-flow keys add. */
function labelLines(step: StepDefinition): string[] {
  const notes: string[] = [];
  if (step.queue) notes.push(`queue ${step.queue}`);
  if (step.type === 'signal') notes.push('signal');
  if (typeof step.sleep === 'string') notes.push(`sleeps ${step.sleep}`);
  else if (step.sleep) notes.push(`sleeps until ${step.sleep.until}`);
  if (step.fail) notes.push('fails the job');
  if (step.otherwise) notes.push('otherwise');
  if (step.task) notes.push(`for each: ${step.task}`);
  if (step.retries) notes.push(`retries ${step.retries}`);
  if (step.timeout) notes.push(`timeout ${step.timeout}`);
  const lines = [step.name];
  if (notes.length) lines.push(`(${notes.join(', ')})`);
  const call = callLabel(step);
  if (call) lines.push(call);
  if (step.when) lines.push(`when: ${step.when}`);
  if (step.join) lines.push(`join: ${step.join}`);
  if (step.continueOnError) lines.push('on error: continues');
  return lines;
}

/** The edge from `dependency` to `step` carries the error to a handler branch. */
function isErrorEdge(steps: readonly StepDefinition[], dependency: string, step: StepDefinition): boolean {
  return (
    handlesError(step) && steps.some((other) => other.name === dependency && other.continueOnError === true)
  );
}

/** Text inside a quoted Mermaid label: its entity codes for what would end the string or read as HTML. */
const mermaidText = (text: string) =>
  text.replaceAll('#', '#35;').replaceAll('"', '#quot;').replaceAll('<', '#lt;').replaceAll('>', '#gt;');

const ERROR_COLOUR = '#c0392b';

function renderMermaid(workflow: WorkflowDefinition): string {
  const lines = ['flowchart TD'];
  const classes = new Map<string, string[]>();
  const classify = (node: string, name: string) => classes.set(name, [...(classes.get(name) ?? []), node]);
  // Mermaid styles an edge by its position among all edges drawn.
  let edges = 0;
  const errorEdges: number[] = [];
  const scope = (name: string, steps: StepDefinition[], indent: string) => {
    for (const step of steps) {
      const text = labelLines(step).map(mermaidText).join('<br/>');
      const shape = MERMAID_SHAPES[stepKindOf(step)](text);
      const node = id(name, step.name);
      lines.push(`${indent}${node}${shape}`);
      if (step.when) classify(node, 'conditional');
      if (step.continueOnError) classify(node, 'continues');
      if (step.workflow) classify(node, 'call');
    }
    for (const step of steps)
      for (const dependency of step.depends ?? []) {
        if (isErrorEdge(steps, dependency, step)) {
          errorEdges.push(edges);
          lines.push(`${indent}${id(name, dependency)} -.->|"on error"| ${id(name, step.name)}`);
        } else lines.push(`${indent}${id(name, dependency)} --> ${id(name, step.name)}`);
        edges++;
      }
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
      if (step.task) {
        lines.push(`  ${id(owner.name, step.name)} -.-> ${id('task', step.task)}`);
        edges++;
      }
  }
  if (workflow.onFailure) {
    const node = id('onFailure', workflow.name);
    lines.push(`  ${node}>"${mermaidText(`on failure: starts workflow ${workflow.onFailure}`)}"]`);
    classify(node, 'onFailure');
  }
  // Only what this workflow uses: a workflow without the control-flow keys draws as it always did.
  const styles: Record<string, string> = {
    conditional: 'stroke-dasharray: 5 3',
    continues: 'stroke:#d97706,stroke-width:2px',
    call: 'fill:#eef4ff,stroke:#3b6fd8',
    onFailure: `fill:#fdecec,stroke:${ERROR_COLOUR},color:${ERROR_COLOUR}`,
  };
  for (const [name, nodes] of classes) {
    lines.push(`  classDef ${name} ${styles[name]}`);
    lines.push(`  class ${nodes.join(',')} ${name}`);
  }
  if (errorEdges.length)
    lines.push(`  linkStyle ${errorEdges.join(',')} stroke:${ERROR_COLOUR},color:${ERROR_COLOUR}`);
  return `${lines.join('\n')}\n`;
}

function renderDot(workflow: WorkflowDefinition): string {
  const quote = (text: string) => `"${text.replaceAll('"', '\\"')}"`;
  // Label lines: backslashes and quotes escaped, joined by DOT's own line break.
  const label = (lines: string[]) =>
    `"${lines.map((line) => line.replaceAll('\\', '\\\\').replaceAll('"', '\\"')).join('\\n')}"`;
  const lines = [`digraph ${quote(workflow.name)} {`, '  rankdir=TB;', '  node [shape=box, style=rounded];'];
  const scope = (name: string, steps: StepDefinition[], indent: string) => {
    for (const step of steps) {
      const attributes = [`label=${label(labelLines(step))}`];
      const shape = DOT_SHAPES[stepKindOf(step)];
      if (shape) attributes.push(`shape=${shape}`);
      if (step.when) attributes.push('style="rounded,dashed"');
      if (step.continueOnError) attributes.push('color=darkorange', 'penwidth=2');
      lines.push(`${indent}${id(name, step.name)} [${attributes.join(', ')}];`);
    }
    for (const step of steps)
      for (const dependency of step.depends ?? [])
        lines.push(
          `${indent}${id(name, dependency)} -> ${id(name, step.name)}${
            isErrorEdge(steps, dependency, step)
              ? ' [style=dashed, color=red3, fontcolor=red3, label="on error"]'
              : ''
          };`,
        );
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
  if (workflow.onFailure)
    lines.push(
      `  ${id('onFailure', workflow.name)} [shape=note, style=solid, color=red3, fontcolor=red3, label=${label([`on failure: starts workflow ${workflow.onFailure}`])}];`,
    );
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
