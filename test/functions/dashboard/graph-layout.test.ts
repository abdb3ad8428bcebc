import { describe, expect, it } from 'vitest';
import {
  fitText,
  layoutGraph,
  NODE_METRICS,
  nodeSize,
  smoothPath,
} from '../../../functions/dashboard/src/graph-layout.js';
import { workflowGraph } from '../../../functions/dashboard/src/graph-model.js';

const WORKFLOW = {
  name: 'w',
  steps: [
    { name: 'split' },
    { name: 'fan', task: 'each', depends: ['split'] },
    { name: 'sum', depends: ['fan'] },
    { name: 'side' },
  ],
  tasks: [
    { name: 'each', itemListKey: 'items', steps: [{ name: 'one' }, { name: 'two', depends: ['one'] }] },
  ],
};

const overlap = (a: { x: number; y: number; width: number; height: number }, b: typeof a) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('Function: layoutGraph', () => {
  it('places every box inside the drawing, none on another, dependencies above their dependents', () => {
    // Act
    const drawing = layoutGraph(workflowGraph(WORKFLOW));

    // Assess
    const byId = new Map(drawing.nodes.map((node) => [node.id, node]));
    for (const node of drawing.nodes) {
      expect(node.x).toBeGreaterThanOrEqual(0);
      expect(node.y).toBeGreaterThanOrEqual(0);
      expect(node.x + node.width).toBeLessThanOrEqual(drawing.width);
      expect(node.y + node.height).toBeLessThanOrEqual(drawing.height);
      for (const other of drawing.nodes) if (other !== node) expect(overlap(node, other)).toBe(false);
    }
    for (const edge of drawing.edges) {
      const from = byId.get(edge.from);
      const to = byId.get(edge.to);
      expect(from && to && from.y + from.height <= to.y).toBe(true);
      expect(edge.points.length).toBeGreaterThanOrEqual(2);
    }
  });

  it("puts a task's steps inside its cluster, with room for the label", () => {
    const drawing = layoutGraph(workflowGraph(WORKFLOW));
    const [cluster] = drawing.clusters;
    expect(cluster).toBeDefined();
    const inside = drawing.nodes.filter((node) => node.cluster === cluster?.id);
    expect(inside.map((node) => node.step)).toEqual(['one', 'two']);
    for (const node of inside) {
      expect(node.x).toBeGreaterThan(cluster?.x ?? 0);
      expect(node.x + node.width).toBeLessThan((cluster?.x ?? 0) + (cluster?.width ?? 0));
      expect(node.y + node.height + NODE_METRICS.clusterLabelHeight).toBeLessThan(
        (cluster?.y ?? 0) + (cluster?.height ?? 0),
      );
    }
    expect(cluster?.width).toBeGreaterThanOrEqual((cluster?.label.length ?? 0) * NODE_METRICS.noteCharWidth);
  });

  it('draws an empty workflow as an empty drawing', () => {
    expect(layoutGraph({ nodes: [], edges: [], clusters: [] })).toMatchObject({ nodes: [], edges: [] });
  });
});

describe('Function: nodeSize', () => {
  it('fits the name, within bounds, and makes a running fan-out step taller for its bar', () => {
    const small = nodeSize({ id: 'a', step: 'a', kind: 'step', notes: [] });
    const long = nodeSize({ id: 'b', step: 'x'.repeat(80), kind: 'step', notes: [] });
    const fan = nodeSize({ id: 'c', step: 'c', kind: 'fan-out', notes: [], state: 'running' });
    expect(small).toEqual({
      width: NODE_METRICS.minWidth + 2 * NODE_METRICS.paddingX,
      height: NODE_METRICS.height,
    });
    expect(long.width).toBe(NODE_METRICS.maxWidth);
    expect(fan.height).toBe(NODE_METRICS.fanOutHeight);
  });
});

describe('Function: fitText', () => {
  it('keeps what fits and shortens the rest with an ellipsis', () => {
    expect(fitText('short', 100, 10)).toBe('short');
    expect(fitText('a-much-longer-name', 100, 10)).toBe('a-much-lo…');
  });
});

describe('Function: smoothPath', () => {
  it('draws lines for two points and curves through more, ending on the last point', () => {
    expect(smoothPath([])).toBe('');
    expect(
      smoothPath([
        { x: 0, y: 0 },
        { x: 0, y: 10 },
      ]),
    ).toBe('M0,0L0,10');
    const curve = smoothPath([
      { x: 0, y: 0 },
      { x: 10, y: 10 },
      { x: 0, y: 20 },
    ]);
    expect(curve.startsWith('M0,0')).toBe(true);
    expect(curve).toContain('C');
    expect(curve.endsWith('L0,20')).toBe(true);
  });
});
