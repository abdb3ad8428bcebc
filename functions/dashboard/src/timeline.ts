import type { JobDocument, StepStatus, StepView } from './api-types.js';

/**
 * A job's steps on a time axis (a Gantt chart): one row per step, its bar from its first attempt's
 * sending to its end, each attempt a segment of it. Pure: the drawing only positions what this returns.
 */

/** How an attempt ended, or `running` while it is in flight. */
export type SegmentOutcome =
  | 'completed'
  | 'repeated'
  | 'error'
  | 'timeout'
  | 'rejected'
  | 'cancelled'
  | 'suspended'
  | 'running';

export interface TimelineSegment {
  attempt: number;
  outcome: SegmentOutcome;
  /** Epoch ms. */
  start: number;
  end: number;
  /** In chart units, from the chart's left edge. */
  x: number;
  width: number;
  error?: string;
}

export interface TimelineRow {
  step: string;
  status: StepStatus;
  handled?: true;
  /** Absent for a step never sent (waiting, skipped). */
  bar?: { start: number; end: number; x: number; width: number };
  segments: TimelineSegment[];
}

export interface TimelineTick {
  x: number;
  label: string;
}

export interface TimelineLayout {
  /** The axis: the job's creation to its end (or now). */
  start: number;
  end: number;
  /** The chart's width in units (the rows' labels are drawn beside it). */
  width: number;
  rows: TimelineRow[];
  ticks: TimelineTick[];
}

/** A bar is drawn at least this wide, so an instant step still shows. */
export const MIN_BAR_WIDTH = 3;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [
  100,
  250,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

const parse = (iso: string | undefined): number | undefined => {
  if (!iso) return undefined;
  const at = Date.parse(iso);
  return Number.isNaN(at) ? undefined : at;
};

const isActive = (job: Pick<JobDocument, 'status'>) =>
  job.status === 'running' ||
  job.status === 'waiting' ||
  job.status === 'pending' ||
  job.status === 'queued' ||
  job.status === 'paused';

/**
 * Lays out the job's steps in `order` (the definition's order; steps of the job it does not name come
 * after) over `width` chart units. A running job's axis ends at `now`.
 */
export function layoutTimeline(
  job: Pick<JobDocument, 'status' | 'createdAt' | 'endedAt' | 'updatedAt' | 'steps'>,
  order: readonly string[],
  now: number,
  width: number,
): TimelineLayout {
  const active = isActive(job);
  const jobEnd = active ? now : (parse(job.endedAt) ?? parse(job.updatedAt) ?? now);
  const names = [
    ...order.filter((name) => job.steps[name]),
    ...Object.keys(job.steps).filter((name) => !order.includes(name)),
  ];
  const spans = names.map((name) => ({
    name,
    view: job.steps[name] as StepView,
    ...stepSpan(job.steps[name] as StepView, jobEnd),
  }));
  const starts = spans.flatMap((span) => (span.bar ? [span.bar.start] : []));
  const ends = spans.flatMap((span) => (span.bar ? [span.bar.end] : []));
  const start = Math.min(parse(job.createdAt) ?? jobEnd, ...starts);
  const end = Math.max(jobEnd, ...ends, start + SECOND);
  const scale = width / (end - start);
  const x = (at: number) => (at - start) * scale;
  const rows = spans.map(({ name, view, bar, segments }): TimelineRow => {
    const row: TimelineRow = { step: name, status: view.status, segments: [] };
    if (view.handled) row.handled = true;
    if (!bar) return row;
    row.bar = { ...bar, x: x(bar.start), width: Math.max(MIN_BAR_WIDTH, x(bar.end) - x(bar.start)) };
    row.segments = segments.map((segment) => ({
      ...segment,
      x: x(segment.start),
      width: Math.max(MIN_BAR_WIDTH, x(segment.end) - x(segment.start)),
    }));
    return row;
  });
  return { start, end, width, rows, ticks: ticks(end - start, scale) };
}

interface Span {
  bar?: { start: number; end: number };
  segments: Omit<TimelineSegment, 'x' | 'width'>[];
}

/** A step's extent and its attempts' (epoch ms); a step never sent has none. */
function stepSpan(view: StepView, jobEnd: number): Span {
  const attempts = (view.attempts ?? []).filter((attempt) => parse(attempt.sentAt) !== undefined);
  const first = parse(attempts[0]?.sentAt) ?? parse(view.startedAt);
  if (first === undefined) return { segments: [] };
  const last = attempts[attempts.length - 1];
  const stepEnd = parse(view.endedAt) ?? (last ? parse(last.endedAt) : undefined);
  // A step still running (or waiting for its next attempt) reaches the axis' end.
  const ongoing = view.status === 'running' || view.status === 'waiting' || view.status === 'suspended';
  const end = Math.max(first, ongoing ? Math.max(stepEnd ?? jobEnd, jobEnd) : (stepEnd ?? jobEnd));
  const segments: Span['segments'] = attempts.map((attempt, index) => {
    const sent = parse(attempt.sentAt) as number;
    const next = parse(attempts[index + 1]?.sentAt);
    const ended = parse(attempt.endedAt);
    const segment: Span['segments'][number] = {
      attempt: attempt.attempt,
      outcome: attempt.outcome ?? (ended === undefined ? 'running' : 'completed'),
      start: sent,
      end: Math.max(sent, ended ?? next ?? end),
    };
    if (attempt.error) segment.error = attempt.error;
    return segment;
  });
  if (!segments.length) {
    // A document without attempts: the step as one segment.
    segments.push({
      attempt: view.attempt || 1,
      outcome: outcomeOf(view.status),
      start: first,
      end,
    });
  }
  return { bar: { start: first, end }, segments };
}

function outcomeOf(status: StepStatus): SegmentOutcome {
  switch (status) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'error';
    case 'cancelled':
      return 'cancelled';
    case 'suspended':
      return 'suspended';
    default:
      return 'running';
  }
}

/** Round offsets from the axis' start, about `most` of them. */
export function ticks(span: number, scale: number, most = 6): TimelineTick[] {
  const step = STEPS.find((candidate) => span / candidate <= most) ?? Math.ceil(span / most / DAY) * DAY;
  const result: TimelineTick[] = [];
  for (let at = 0; at <= span + 1; at += step) result.push({ x: at * scale, label: offsetLabel(at) });
  return result;
}

/** "0", "250 ms", "5 s", "1 min 30 s", "2 h", "1 d 6 h": an offset from the job's start. */
export function offsetLabel(ms: number): string {
  if (ms === 0) return '0';
  if (ms < SECOND) return `${ms} ms`;
  // Ticks a fraction of a second apart: "1.25 s", not "1 s" twice.
  if (ms < MINUTE && ms % SECOND) return `${Number((ms / SECOND).toFixed(2))} s`;
  const parts: string[] = [];
  const units: [number, string][] = [
    [DAY, 'd'],
    [HOUR, 'h'],
    [MINUTE, 'min'],
    [SECOND, 's'],
  ];
  let rest = ms;
  for (const [size, name] of units) {
    const count = Math.floor(rest / size);
    if (count) parts.push(`${count} ${name}`);
    rest -= count * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** The class a segment is coloured by: the state its outcome resembles. */
export function segmentState(
  outcome: SegmentOutcome,
): 'completed' | 'failed' | 'cancelled' | 'running' | 'suspended' {
  switch (outcome) {
    case 'completed':
    case 'repeated':
      return 'completed';
    case 'error':
    case 'timeout':
    case 'rejected':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'suspended':
      return 'suspended';
    default:
      return 'running';
  }
}
