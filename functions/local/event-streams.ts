import { ApiError, type EventStreamStart, type StreamSink } from '../api/http.js';
import type { ApiDeps } from '../api/router.js';
import type { JobEvent, JobEventFilter, JobEventHub } from '../manager/job-event-hub.js';

export interface EventStreamBounds {
  /** Streams open at once; one more is 429. @default 100 */
  maxStreams: number;
  /** A `: ping` comment this often, so that proxies and clients see the stream alive. @default 15000 */
  heartbeatMs: number;
}

export const DEFAULT_EVENT_STREAM_BOUNDS: EventStreamBounds = { maxStreams: 100, heartbeatMs: 15_000 };

/** One event as SSE: its cursor, its kind, the entry with its job as one line of JSON. */
export function sseEvent(event: JobEvent): string {
  const { id, ...data } = event;
  return `id: ${id}\nevent: ${event.kind}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Serve's `GET /api/events` streams over the hub: at most `maxStreams` at once, each pinged, each
 * ended when its client cannot keep up (its sink says so) and all of them when serve shuts down.
 */
export class EventStreams implements NonNullable<ApiDeps['events']> {
  private readonly open_ = new Set<StreamSink>();
  private reserved = 0;

  constructor(
    private readonly hub: JobEventHub,
    shutdown: AbortSignal,
    private readonly bounds: EventStreamBounds = DEFAULT_EVENT_STREAM_BOUNDS,
  ) {
    shutdown.addEventListener('abort', () => {
      for (const sink of this.open_) sink.end();
    });
  }

  get count(): number {
    return this.reserved;
  }

  open(filter: JobEventFilter, lastEventId: string | undefined): EventStreamStart {
    if (this.reserved >= this.bounds.maxStreams)
      throw new ApiError(
        'too_many_requests',
        `serve holds its most event streams (${this.bounds.maxStreams})`,
      );
    this.reserved += 1;
    return (sink) => this.start(sink, filter, lastEventId);
  }

  private start(sink: StreamSink, filter: JobEventFilter, lastEventId: string | undefined): void {
    let ended = false;
    const send = (text: string) => {
      // The client reads slower than events come: dropped rather than buffered without bound.
      if (ended || sink.write(text)) return;
      ended = true;
      sink.drop();
    };
    const { replay, unsubscribe } = this.hub.subscribe(filter, (event) => send(sseEvent(event)), lastEventId);
    const ping = setInterval(() => send(': ping\n\n'), this.bounds.heartbeatMs);
    ping.unref();
    this.open_.add(sink);
    sink.onClose(() => {
      ended = true;
      clearInterval(ping);
      unsubscribe();
      this.open_.delete(sink);
      this.reserved -= 1;
    });
    send(': switchyard events\n\n');
    if (replay?.kind === 'reset') send('event: reset\ndata: {}\n\n');
    else for (const event of replay?.events ?? []) send(sseEvent(event));
  }
}
