import { graphlib, layout } from '@dagrejs/dagre';
import type { GraphCluster, GraphEdge, GraphModel, GraphNode } from './graph-model.js';

export interface Point {
  x: number;
  y: number;
}

/** Boxes are placed by their top-left corner. */
export interface PositionedNode extends GraphNode {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PositionedEdge extends GraphEdge {
  points: Point[];
}

export interface PositionedCluster extends GraphCluster {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: PositionedNode[];
  edges: PositionedEdge[];
  clusters: PositionedCluster[];
}

/** Sizes in SVG units (px at 100%), shared with the drawing. */
export const NODE_METRICS = {
  labelCharWidth: 8.4,
  noteCharWidth: 6.8,
  minWidth: 168,
  maxWidth: 280,
  paddingX: 18,
  height: 56,
  fanOutHeight: 70,
  clusterPadding: 16,
  clusterLabelHeight: 26,
  margin: 12,
} as const;

/** Wide enough for the name (up to a limit: longer names are shortened with an ellipsis when drawn). */
export function nodeSize(node: GraphNode): { width: number; height: number } {
  const m = NODE_METRICS;
  const label = node.step.length * m.labelCharWidth + 28;
  const notes = node.notes.join(' · ').length * m.noteCharWidth;
  const width = Math.round(Math.min(m.maxWidth, Math.max(m.minWidth, label, notes) + 2 * m.paddingX));
  const height = node.kind === 'fan-out' && node.state !== undefined ? m.fanOutHeight : m.height;
  return { width, height };
}

/** How many characters of a text fit in a width, at a character width. */
export function fitText(text: string, width: number, charWidth: number): string {
  const max = Math.max(1, Math.floor(width / charWidth));
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** Places the boxes top to bottom with dagre; tasks become clusters with room for their label. */
export function layoutGraph(model: GraphModel): GraphLayout {
  const m = NODE_METRICS;
  const graph = new graphlib.Graph({ compound: model.clusters.length > 0, multigraph: false });
  graph.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, edgesep: 16, marginx: 0, marginy: 0 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const cluster of model.clusters) graph.setNode(cluster.id, {});
  for (const node of model.nodes) {
    graph.setNode(node.id, nodeSize(node));
    if (node.cluster) graph.setParent(node.id, node.cluster);
  }
  for (const edge of model.edges)
    graph.setEdge(edge.from, edge.to, { minlen: edge.kind === 'fan-out' ? 2 : 1 });
  layout(graph);

  const nodes: PositionedNode[] = model.nodes.map((node) => {
    const placed = graph.node(node.id) as { x: number; y: number; width: number; height: number };
    return {
      ...node,
      x: placed.x - placed.width / 2,
      y: placed.y - placed.height / 2,
      width: placed.width,
      height: placed.height,
    };
  });
  const edges: PositionedEdge[] = model.edges.map((edge) => ({
    ...edge,
    points: ((graph.edge(edge.from, edge.to) as { points?: Point[] }).points ?? []).map(({ x, y }) => ({
      x,
      y,
    })),
  }));
  const clusters: PositionedCluster[] = model.clusters.map((cluster) => {
    const members = nodes.filter((node) => node.cluster === cluster.id);
    if (!members.length) return { ...cluster, x: 0, y: 0, width: 0, height: 0 };
    // The label goes below the steps: edges come in from above.
    let left = Math.min(...members.map((node) => node.x)) - m.clusterPadding;
    let right = Math.max(...members.map((node) => node.x + node.width)) + m.clusterPadding;
    const top = Math.min(...members.map((node) => node.y)) - m.clusterPadding;
    const bottom =
      Math.max(...members.map((node) => node.y + node.height)) + m.clusterPadding + m.clusterLabelHeight;
    const labelWidth = cluster.label.length * m.noteCharWidth + 28;
    if (right - left < labelWidth) {
      const grow = (labelWidth - (right - left)) / 2;
      left -= grow;
      right += grow;
    }
    return { ...cluster, x: left, y: top, width: right - left, height: bottom - top };
  });
  return normalise({ width: 0, height: 0, nodes, edges, clusters });
}

/** Moves everything so the drawing starts at the margin, and sizes it to what it holds. */
function normalise(drawing: GraphLayout): GraphLayout {
  const m = NODE_METRICS;
  const boxes = [...drawing.nodes, ...drawing.clusters.filter((cluster) => cluster.width > 0)];
  const points = drawing.edges.flatMap((edge) => edge.points);
  if (!boxes.length) return { ...drawing, width: 2 * m.margin, height: 2 * m.margin };
  const minX = Math.min(...boxes.map((box) => box.x), ...points.map((point) => point.x));
  const minY = Math.min(...boxes.map((box) => box.y), ...points.map((point) => point.y));
  const maxX = Math.max(...boxes.map((box) => box.x + box.width), ...points.map((point) => point.x));
  const maxY = Math.max(...boxes.map((box) => box.y + box.height), ...points.map((point) => point.y));
  const dx = m.margin - minX;
  const dy = m.margin - minY;
  const move = <T extends { x: number; y: number }>(item: T): T => ({
    ...item,
    x: item.x + dx,
    y: item.y + dy,
  });
  return {
    width: Math.ceil(maxX - minX + 2 * m.margin),
    height: Math.ceil(maxY - minY + 2 * m.margin),
    nodes: drawing.nodes.map(move),
    clusters: drawing.clusters.map(move),
    edges: drawing.edges.map((edge) => ({ ...edge, points: edge.points.map(move) })),
  };
}

/**
 * An SVG path through the points as a uniform B-spline (the shape of d3's curveBasis): it starts and
 * ends on the first and last points and bends smoothly through the ones between.
 */
export function smoothPath(points: readonly Point[]): string {
  const p = points;
  const first = p[0];
  if (!first) return '';
  const f = (n: number) => Math.round(n * 10) / 10;
  if (p.length === 1) return `M${f(first.x)},${f(first.y)}`;
  if (p.length === 2) {
    const last = p[1] as Point;
    return `M${f(first.x)},${f(first.y)}L${f(last.x)},${f(last.y)}`;
  }
  let d = `M${f(first.x)},${f(first.y)}`;
  const second = p[1] as Point;
  d += `L${f((5 * first.x + second.x) / 6)},${f((5 * first.y + second.y) / 6)}`;
  for (let i = 1; i < p.length - 1; i++) {
    const a = p[i - 1] as Point;
    const b = p[i] as Point;
    const c = p[i + 1] as Point;
    d +=
      `C${f((2 * a.x + b.x) / 3)},${f((2 * a.y + b.y) / 3)} ` +
      `${f((a.x + 2 * b.x) / 3)},${f((a.y + 2 * b.y) / 3)} ` +
      `${f((a.x + 4 * b.x + c.x) / 6)},${f((a.y + 4 * b.y + c.y) / 6)}`;
  }
  const a = p[p.length - 2] as Point;
  const b = p[p.length - 1] as Point;
  d +=
    `C${f((2 * a.x + b.x) / 3)},${f((2 * a.y + b.y) / 3)} ` +
    `${f((a.x + 2 * b.x) / 3)},${f((a.y + 2 * b.y) / 3)} ` +
    `${f((a.x + 5 * b.x) / 6)},${f((a.y + 5 * b.y) / 6)}`;
  return `${d}L${f(b.x)},${f(b.y)}`;
}
