import type { JobDocument } from '../api-types.js';
import { absoluteTime, formatDuration } from '../format.js';
import { fitText } from '../graph-layout.js';
import { routeHref } from '../route.js';
import { layoutTimeline, segmentState, type TimelineRow } from '../timeline.js';

const LABEL_WIDTH = 170;
const CHART_WIDTH = 760;
const RIGHT = 24;
const AXIS = 26;
const ROW = 28;
const BAR = 14;
const CHAR = 7.4;

/**
 * The job's steps over time: a bar per step from its first attempt's sending to its end, coloured by
 * its state, each attempt a segment coloured by how it ended; the gaps between are waits for a retry.
 */
export function TimelineView({
  job,
  order,
  now,
  selected,
}: {
  job: JobDocument;
  order: readonly string[];
  now: number;
  selected?: string;
}) {
  const layout = layoutTimeline(job, order, now, CHART_WIDTH);
  const width = LABEL_WIDTH + CHART_WIDTH + RIGHT;
  const height = AXIS + layout.rows.length * ROW + 8;
  return (
    <div class="graph-scroll timeline-scroll">
      <svg
        class="timeline"
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        aria-label={`The steps of job ${job.uuid} over time`}
      >
        <g class="timeline-axis" transform={`translate(${LABEL_WIDTH},0)`}>
          {layout.ticks.map((tick) => (
            <g key={tick.x} transform={`translate(${tick.x},0)`}>
              <line class="timeline-grid" y1={AXIS - 6} y2={height} />
              <text class="timeline-tick" y={AXIS - 10} text-anchor={tick.x === 0 ? 'start' : 'middle'}>
                {tick.label}
              </text>
            </g>
          ))}
        </g>
        {layout.rows.map((row, index) => (
          <TimelineRowView
            key={row.step}
            row={row}
            awaiting={job.waitingFor?.some((wait) => wait.step === row.step) ?? false}
            y={AXIS + index * ROW}
            href={routeHref({ view: 'job', id: job.uuid, step: row.step })}
            selected={row.step === selected}
          />
        ))}
      </svg>
    </div>
  );
}

function TimelineRowView({
  row,
  awaiting,
  y,
  href,
  selected,
}: {
  row: TimelineRow;
  /** It waits for someone: drawn as a suspended step is. */
  awaiting: boolean;
  y: number;
  href: string;
  selected: boolean;
}) {
  const state = row.handled ? 'handled' : awaiting ? 'suspended' : row.status;
  const barY = (ROW - BAR) / 2;
  const duration = row.bar ? formatDuration(row.bar.end - row.bar.start) : undefined;
  return (
    <a
      href={href}
      class={`timeline-row state-${state}${selected ? ' selected' : ''}`}
      data-timeline-step={row.step}
      data-state={row.status}
      data-attempts={row.segments.length}
      aria-label={`${row.step}: ${row.status}${duration ? `, ${duration}` : ', not sent'}`}
    >
      <g transform={`translate(0,${y})`}>
        <rect class="timeline-row-hit" width={LABEL_WIDTH + CHART_WIDTH} height={ROW} />
        <text class="timeline-label" x="4" y={ROW / 2 + 4}>
          {fitText(row.step, LABEL_WIDTH - 14, CHAR)}
        </text>
        {row.bar ? (
          <g transform={`translate(${LABEL_WIDTH},${barY})`}>
            <rect class="timeline-bar" x={row.bar.x} width={row.bar.width} height={BAR} rx="3">
              <title>
                {row.step}: {row.status}, {duration}
              </title>
            </rect>
            {row.segments.map((segment) => (
              <rect
                key={segment.attempt}
                class={`timeline-segment state-${awaiting && segment.outcome === 'running' ? 'suspended' : segmentState(segment.outcome)}`}
                data-attempt={segment.attempt}
                data-outcome={segment.outcome}
                x={segment.x}
                width={segment.width}
                height={BAR}
                rx="3"
              >
                <title>
                  {`attempt ${segment.attempt}: ${segment.outcome}, ${formatDuration(segment.end - segment.start)}\n` +
                    `sent ${absoluteTime(new Date(segment.start).toISOString())}` +
                    (segment.error ? `\n${segment.error}` : '')}
                </title>
              </rect>
            ))}
          </g>
        ) : (
          <text class="timeline-none" x={LABEL_WIDTH + 4} y={ROW / 2 + 4}>
            {row.status === 'skipped' ? 'skipped' : 'not sent'}
          </text>
        )}
      </g>
    </a>
  );
}
