import { describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../engine/index.js';
import { handlesError, renderGraph } from '../../../functions/cli/render-graph.js';

/** A checkout with every control-flow key: a handled failure, its two branches, calls, a follow-up. */
const CHECKOUT: WorkflowDefinition = {
  name: 'checkout',
  onFailure: 'notify-ops',
  steps: [
    { name: 'charge', queue: 'payments', retries: 2, continueOnError: true },
    { name: 'refund', depends: ['charge'], when: 'has(input.error)' },
    { name: 'ship', depends: ['charge'], when: '!has(input.error) && input.note != "a<b"' },
    { name: 'pay', depends: ['ship'], workflow: 'payment', version: 3 },
    { name: 'audit', depends: ['refund', 'pay'], workflow: 'audit' },
  ],
};

/** The same shape without the control-flow keys. */
const PLAIN: WorkflowDefinition = {
  name: 'plain',
  steps: [
    { name: 'a', queue: 'q', retries: 1 },
    { name: 'b', depends: ['a'] },
    { name: 'ok', type: 'signal' },
  ],
};

describe('Function: renderGraph (mermaid)', () => {
  it('draws conditions, the handled failure with its error branch, calls and the follow-up workflow', () => {
    // Act
    const text = renderGraph(CHECKOUT, 'mermaid');

    // Assess
    expect(text).toBe(
      [
        'flowchart TD',
        '  checkout__charge["charge<br/>(queue payments, retries 2)<br/>on error: continues"]',
        '  checkout__refund["refund<br/>when: has(input.error)"]',
        '  checkout__ship["ship<br/>when: !has(input.error) && input.note != #quot;a#lt;b#quot;"]',
        '  checkout__pay(["pay<br/>calls payment v3"])',
        '  checkout__audit(["audit<br/>calls audit (latest)"])',
        '  checkout__charge -.->|"on error"| checkout__refund',
        '  checkout__charge --> checkout__ship',
        '  checkout__ship --> checkout__pay',
        '  checkout__refund --> checkout__audit',
        '  checkout__pay --> checkout__audit',
        '  onFailure__checkout>"on failure: starts workflow notify-ops"]',
        '  classDef continues stroke:#d97706,stroke-width:2px',
        '  class checkout__charge continues',
        '  classDef conditional stroke-dasharray: 5 3',
        '  class checkout__refund,checkout__ship conditional',
        '  classDef call fill:#eef4ff,stroke:#3b6fd8',
        '  class checkout__pay,checkout__audit call',
        '  classDef onFailure fill:#fdecec,stroke:#c0392b,color:#c0392b',
        '  class onFailure__checkout onFailure',
        '  linkStyle 0 stroke:#c0392b,color:#c0392b',
        '',
      ].join('\n'),
    );
  });

  it('keeps labels inside their quotes: no raw quote, angle bracket or entity-like # from an expression', () => {
    const text = renderGraph(
      { name: 'w', steps: [{ name: 's', when: 'input.tag == "#x;" || input.n > 1 || input.m < 2' }] },
      'mermaid',
    );
    const label = /w__s\["(.*)"\]/.exec(text)?.[1] ?? '';
    expect(label).toBe('s<br/>when: input.tag == #quot;#35;x;#quot; || input.n #gt; 1 || input.m #lt; 2');
    expect(label.replaceAll('<br/>', '')).not.toMatch(/["<>]/);
  });

  it('numbers the error edges among all edges, fan-out edges included', () => {
    const text = renderGraph(
      {
        name: 'w',
        steps: [
          { name: 'split' },
          { name: 'each', task: 't', depends: ['split'], continueOnError: true },
          { name: 'ok', depends: ['each'], when: '!has(input.error)' },
          { name: 'recover', depends: ['each'], when: 'has(input.error)' },
        ],
        tasks: [{ name: 't', itemListKey: 'items', steps: [{ name: 'x' }, { name: 'y', depends: ['x'] }] }],
      },
      'mermaid',
    );
    // Edges in order: split→each (0), each→ok (1), each→recover (2), x→y (3), each -.-> task (4).
    expect(text).toContain('  w__each -.->|"on error"| w__recover\n');
    expect(text).toContain('  linkStyle 2 stroke:#c0392b,color:#c0392b\n');
  });

  it('draws a workflow without control-flow keys as before: no classes, no link styles', () => {
    expect(renderGraph(PLAIN, 'mermaid')).toBe(
      [
        'flowchart TD',
        '  plain__a["a<br/>(queue q, retries 1)"]',
        '  plain__b["b"]',
        '  plain__ok{{"ok<br/>(signal)"}}',
        '  plain__a --> plain__b',
        '',
      ].join('\n'),
    );
  });
});

describe('Function: renderGraph (dot)', () => {
  it('draws conditions dashed, the handled step orange, its error edge red, calls as components, the follow-up as a note', () => {
    // Act
    const text = renderGraph(CHECKOUT, 'dot');

    // Assess
    expect(text).toBe(
      [
        'digraph "checkout" {',
        '  rankdir=TB;',
        '  node [shape=box, style=rounded];',
        '  checkout__charge [label="charge\\n(queue payments, retries 2)\\non error: continues", color=darkorange, penwidth=2];',
        '  checkout__refund [label="refund\\nwhen: has(input.error)", style="rounded,dashed"];',
        '  checkout__ship [label="ship\\nwhen: !has(input.error) && input.note != \\"a<b\\"", style="rounded,dashed"];',
        '  checkout__pay [label="pay\\ncalls payment v3", shape=component];',
        '  checkout__audit [label="audit\\ncalls audit (latest)", shape=component];',
        '  checkout__charge -> checkout__refund [style=dashed, color=red3, fontcolor=red3, label="on error"];',
        '  checkout__charge -> checkout__ship;',
        '  checkout__ship -> checkout__pay;',
        '  checkout__refund -> checkout__audit;',
        '  checkout__pay -> checkout__audit;',
        '  onFailure__checkout [shape=note, style=solid, color=red3, fontcolor=red3, label="on failure: starts workflow notify-ops"];',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('escapes backslashes in expressions, so a label cannot end early', () => {
    const text = renderGraph({ name: 'w', steps: [{ name: 's', when: 'input.path == "a\\\\"' }] }, 'dot');
    expect(text).toContain('w__s [label="s\\nwhen: input.path == \\"a\\\\\\\\\\"", style="rounded,dashed"];');
  });

  it('draws a workflow without control-flow keys as before', () => {
    expect(renderGraph(PLAIN, 'dot')).toBe(
      [
        'digraph "plain" {',
        '  rankdir=TB;',
        '  node [shape=box, style=rounded];',
        '  plain__a [label="a\\n(queue q, retries 1)"];',
        '  plain__b [label="b"];',
        '  plain__ok [label="ok\\n(signal)", shape=hexagon];',
        '  plain__a -> plain__b;',
        '}',
        '',
      ].join('\n'),
    );
  });
});

describe('Function: handlesError', () => {
  it.each([
    ['has(input.error)', true],
    ['has(input.error) && input.error.attempts > 1', true],
    ['input.total > 1 || has( input.error )', true],
    ['!has(input.error)', false],
    ['! has(input.error)', false],
    ['input.total > 1', false],
  ])('%s: %s', (when, expected) => {
    expect(handlesError({ name: 's', when })).toBe(expected);
  });
});
