/**
 * Issue 28's runaway tree: workflows that fan out to 3 children that each call the next one, round
 * and round, with no worker in the way. The 16-deep call limit bounds each chain; only the tree's
 * quota (or a cancel) bounds the tree. `names` are the workflows in their calling order.
 */
export function runawayWorkflows(names: readonly string[]): { name: string; definition: string }[] {
  return names.map((name, n) => ({
    name,
    definition: `name: ${name}
steps:
  - name: spread
    task: each
    input: '{"items": [1, 2, 3]}'
tasks:
  - name: each
    itemListKey: items
    steps:
      - name: call
        workflow: ${names[(n + 1) % names.length]}
`,
  }));
}

/** The same workflows as the items of a `workflows:` list, to go into a document with others. */
export function runawayEntries(names: readonly string[]): string {
  const indented = runawayWorkflows(names).map(({ definition }) =>
    definition
      .trimEnd()
      .split('\n')
      .map((line, n) => (n === 0 ? `  - ${line}` : `    ${line}`))
      .join('\n'),
  );
  return `${indented.join('\n')}\n`;
}

/** The same workflows as one `workflows:` document. */
export function runawayDocument(names: readonly string[]): string {
  return `workflows:\n${runawayEntries(names)}`;
}
