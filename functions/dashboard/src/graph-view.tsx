import type { StepStatus } from './api-types.js';
import { fitText, type GraphLayout, NODE_METRICS, type PositionedNode, smoothPath } from './graph-layout.js';

export interface GraphViewProps {
  layout: GraphLayout;
  /** A short description for screen readers. */
  title: string;
  /** The selected step's node id. */
  selected?: string;
  /** Makes each node a link (a job's step: its details below the graph). */
  hrefFor?: (node: PositionedNode) => string;
  /** The second line of a node; by default its notes. */
  noteFor?: (node: PositionedNode) => string;
  /** A `workflow:` step's called job: a link of its own at the box's corner. */
  jobHref?: (job: string) => string;
}

/** The DAG as SVG: boxes by dagre, edges as smooth curves, a job's steps coloured by state. */
export function GraphView({ layout, title, selected, hrefFor, noteFor, jobHref }: GraphViewProps) {
  return (
    <div class="graph-scroll">
      <svg
        class="graph"
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        width={layout.width}
        height={layout.height}
        aria-label={title}
      >
        <defs>
          <marker
            id="sy-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M0,0 L10,5 L0,10 z" class="graph-arrow" />
          </marker>
        </defs>
        {layout.clusters.map((cluster) => (
          <g class="cluster" key={cluster.id}>
            <rect x={cluster.x} y={cluster.y} width={cluster.width} height={cluster.height} rx="12" />
            <text x={cluster.x + 14} y={cluster.y + cluster.height - 12} class="cluster-label">
              {fitText(cluster.label, cluster.width - 28, NODE_METRICS.noteCharWidth)}
            </text>
          </g>
        ))}
        {layout.edges.map((edge) => (
          <path
            key={`${edge.from}->${edge.to}`}
            class={`edge edge-${edge.kind}`}
            d={smoothPath(edge.points)}
            marker-end="url(#sy-arrow)"
          />
        ))}
        {layout.nodes.map((node) => (
          <GraphNodeView
            key={node.id}
            node={node}
            selected={node.id === selected}
            href={hrefFor?.(node)}
            note={noteFor ? noteFor(node) : node.notes.join(' · ')}
            facts={noteFor ? node.notes : []}
          />
        ))}
        {jobHref &&
          layout.nodes.map(
            (node) =>
              node.job && <CalledJobLink key={`job:${node.id}`} node={node} href={jobHref(node.job)} />,
          )}
      </svg>
    </div>
  );
}

function GraphNodeView({
  node,
  selected,
  href,
  note,
  facts,
}: {
  node: PositionedNode;
  selected: boolean;
  href?: string;
  note: string;
  /** More lines for the tooltip: the step's definition, when the note shows its state. */
  facts: string[];
}) {
  const m = NODE_METRICS;
  const { width, height } = node;
  // A failure its workflow handled is drawn apart from one that failed the job; a step that waits
  // for someone apart from one that runs.
  const look = node.handled ? 'handled' : node.awaiting ? 'suspended' : (node.state ?? 'none');
  const classes = ['node', `kind-${node.kind}`, `state-${look}`];
  if (node.when) classes.push('conditional');
  if (selected) classes.push('selected');
  if (href) classes.push('clickable');
  const labelX = node.state ? 38 : m.paddingX;
  // A fan-out step is drawn as a stack of boxes, 8 units deeper than its own.
  const stack = node.kind === 'fan-out' ? 8 : 0;
  const children = node.children;
  const barWidth = width - 2 * m.paddingX;
  const share = (count: number) => (children?.total ? (barWidth * count) / children.total : 0);
  const body = (
    <>
      <title>{[node.step, note, ...facts].filter(Boolean).join('\n')}</title>
      {selected && (
        <rect
          class="node-halo"
          x="-5"
          y="-5"
          width={width + 10 + stack}
          height={height + 10 + stack}
          rx="14"
        />
      )}
      {node.kind === 'fan-out' && (
        <>
          <rect class="node-stack" x="8" y="8" width={width} height={height} rx="10" />
          <rect class="node-stack" x="4" y="4" width={width} height={height} rx="10" />
        </>
      )}
      <rect class="node-box" width={width} height={height} rx="10" />
      {node.kind === 'signal' && (
        <path class="node-flag" d={`M${width - 22},12 v18 M${width - 22},12 h10 l-3,4 l3,4 h-10`} />
      )}
      {node.kind === 'call' && (
        <path class="node-call-bars" d={`M6,6 v${height - 12} M${width - 6},6 v${height - 12}`} />
      )}
      {node.state && <StateIcon state={node.awaiting ? 'suspended' : node.state} />}
      <text class="node-label" x={labelX} y="24">
        {fitText(
          node.step,
          width - labelX - (node.kind === 'signal' || node.job ? 30 : 14),
          m.labelCharWidth,
        )}
      </text>
      <text class="node-note" x={m.paddingX} y="44">
        {fitText(note, barWidth, m.noteCharWidth)}
      </text>
      {node.kind === 'fan-out' && node.state && (
        <g class="node-bar" transform={`translate(${m.paddingX},54)`}>
          <rect class="node-bar-track" width={barWidth} height="6" rx="3" />
          {children && <rect class="node-bar-done" width={share(children.done)} height="6" rx="3" />}
          {children && children.failed > 0 && (
            <rect
              class="node-bar-failed"
              x={share(children.done)}
              width={share(children.failed)}
              height="6"
              rx="3"
            />
          )}
        </g>
      )}
    </>
  );
  const common = {
    class: classes.join(' '),
    transform: `translate(${node.x},${node.y})`,
    'data-step': node.step,
    'data-node': node.id,
    'data-state': node.state,
    'data-handled': node.handled ? 'true' : undefined,
    'data-awaiting': node.awaiting,
  };
  if (!href) return <g {...common}>{body}</g>;
  return (
    <a
      {...common}
      href={href}
      aria-current={selected ? 'true' : undefined}
      aria-label={`${node.step}${node.state ? `, ${node.handled ? 'failed, handled' : node.awaiting ? 'waiting for someone' : node.state}` : ''}${note ? `: ${note}` : ''}`}
    >
      {body}
    </a>
  );
}

/** A small glyph per state, drawn (not a font character, so it looks the same everywhere). */
function StateIcon({ state }: { state: StepStatus }) {
  return (
    <g class="node-icon" transform="translate(20,19)">
      <circle r="9" class="node-icon-disc" />
      {state === 'completed' && <path d="M-4,0.5 L-1.2,3.3 L4.2,-2.8" class="node-icon-mark" />}
      {state === 'failed' && <path d="M-3.2,-3.2 L3.2,3.2 M3.2,-3.2 L-3.2,3.2" class="node-icon-mark" />}
      {state === 'cancelled' && <path d="M-4,0 L4,0" class="node-icon-mark" />}
      {state === 'running' && <path d="M0,-5 A5,5 0 1,1 -5,0" class="node-icon-spin" />}
      {state === 'waiting' && <circle r="2" class="node-icon-dot" />}
      {state === 'skipped' && (
        <path d="M-4,-3.5 L-0.5,0 L-4,3.5 M0.5,-3.5 L4,0 L0.5,3.5" class="node-icon-mark" />
      )}
      {/* An hourglass: it waits for someone. */}
      {state === 'suspended' && <path d="M-3.5,-4.5 H3.5 L-3.5,4.5 H3.5 Z" class="node-icon-mark" />}
    </g>
  );
}

/** A link to the job a `workflow:` step called, drawn over its box's top right corner. */
function CalledJobLink({ node, href }: { node: PositionedNode; href: string }) {
  return (
    <a
      class="node-job-link"
      href={href}
      aria-label={`Open the job ${node.step} called`}
      data-called-job={node.job}
    >
      <g transform={`translate(${node.x + node.width - 30},${node.y + 8})`}>
        <title>Open the job it called</title>
        <rect width="22" height="22" rx="5" />
        <path d="M8,6 h8 v8 M16,6 L7,15" />
      </g>
    </a>
  );
}
