import { randomUUID } from 'node:crypto';
import {
  type HistoryEntry,
  type HistoryKind,
  type JobRecord,
  splitQualifiedName,
} from '../../engine/index.js';

/** One history entry committed by this process, with the job it belongs to. */
export interface JobEvent extends HistoryEntry {
  /** The stream's cursor (`id:`): `<this hub>.<n>`, resumable within the hub's window. */
  id: string;
  jobId: string;
  workflow: string;
  namespace: string;
}

/** Which events a stream wants: its namespace always, the rest when given. */
export interface JobEventFilter {
  namespace: string;
  job?: string;
  workflow?: string;
  kinds?: ReadonlySet<HistoryKind>;
}

export type JobEventListener = (event: JobEvent) => void;

/** What a subscription replays first: the events after the cursor, or a reset when it is out of the window. */
export type Replay = { kind: 'events'; events: JobEvent[] } | { kind: 'reset' };

/** @default 10000 events kept for `Last-Event-ID` */
export const DEFAULT_EVENT_WINDOW = 10_000;

/**
 * The manager's committed history entries, in process, for `GET /api/events`. Nothing is kept or
 * built until a stream has opened (`listening`): the commit path pays one property read then. After
 * that, the last `window` events are kept so that a stream can resume (`Last-Event-ID`).
 */
export class JobEventHub {
  private readonly hub = randomUUID().slice(0, 8);
  private next = 1;
  /** The kept events are `ring[first…]`: dropping the oldest moves `first`, and the array is cut now and then. */
  private ring: JobEvent[] = [];
  private first = 0;
  private readonly listeners = new Set<{ filter: JobEventFilter; listener: JobEventListener }>();
  private started = false;

  constructor(private readonly window = DEFAULT_EVENT_WINDOW) {}

  /** Whether committed entries are worth handing over. */
  get listening(): boolean {
    return this.started;
  }

  get streams(): number {
    return this.listeners.size;
  }

  /** The entries a commit added to `job` (those after `afterSeq`). */
  publish(job: JobRecord, afterSeq: number): void {
    if (!this.started) return;
    const { namespace, name } = splitQualifiedName(job.workflow);
    for (const entry of job.history ?? []) {
      if (entry.seq <= afterSeq) continue;
      const event: JobEvent = {
        ...entry,
        id: `${this.hub}.${this.next++}`,
        jobId: job.id,
        workflow: name,
        namespace,
      };
      this.ring.push(event);
      if (this.ring.length - this.first > this.window) this.first += 1;
      if (this.first >= this.window) {
        this.ring = this.ring.slice(this.first);
        this.first = 0;
      }
      for (const { filter, listener } of this.listeners) if (matches(filter, event)) listener(event);
    }
  }

  /**
   * Listens from now on; with `lastEventId`, first the kept events after it that match (or a reset
   * when it is not one of this hub's, or fell out of the window). Returns how to stop listening.
   */
  subscribe(
    filter: JobEventFilter,
    listener: JobEventListener,
    lastEventId?: string,
  ): { replay: Replay | undefined; unsubscribe: () => void } {
    this.started = true;
    const replay = lastEventId === undefined ? undefined : this.replay(filter, lastEventId);
    const entry = { filter, listener };
    this.listeners.add(entry);
    return { replay, unsubscribe: () => this.listeners.delete(entry) };
  }

  private replay(filter: JobEventFilter, lastEventId: string): Replay {
    const [hub, n] = lastEventId.split('.');
    const seen = Number(n);
    // Cursors number the events one after the other: the oldest kept is the next less those kept.
    const oldest = this.next - (this.ring.length - this.first);
    // Events after `seen` are all still kept when the one after it is.
    if (hub !== this.hub || !Number.isInteger(seen) || seen + 1 < oldest || seen >= this.next)
      return { kind: 'reset' };
    const from = this.first + seen + 1 - oldest;
    return { kind: 'events', events: this.ring.slice(from).filter((event) => matches(filter, event)) };
  }
}

function matches(filter: JobEventFilter, event: JobEvent): boolean {
  return (
    event.namespace === filter.namespace &&
    (filter.job === undefined || event.jobId === filter.job) &&
    (filter.workflow === undefined || event.workflow === filter.workflow) &&
    (filter.kinds === undefined || filter.kinds.has(event.kind))
  );
}
