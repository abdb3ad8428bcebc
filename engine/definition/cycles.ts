/**
 * Finds the cycles of a directed graph given as adjacency lists, each spelled out from its first
 * node back to itself (`a -> b -> a`); one cycle per strongly connected knot, in a stable order.
 */
export function findCycles(nodes: readonly string[], edges: (node: string) => readonly string[]): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const reported = new Set<string>();

  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges(node)) {
      const nextState = state.get(next);
      if (nextState === 'open') {
        const cycle = [...stack.slice(stack.indexOf(next)), next];
        const signature = [...new Set(cycle)].sort().join('\u0000');
        if (!reported.has(signature)) {
          reported.add(signature);
          cycles.push(cycle);
        }
      } else if (nextState === undefined && nodes.includes(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };

  for (const node of nodes) if (!state.has(node)) visit(node);
  return cycles;
}
