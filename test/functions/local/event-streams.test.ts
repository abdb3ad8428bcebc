import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../engine/index.js';
import type { StreamSink } from '../../../functions/api/http.js';
import { EventStreams } from '../../../functions/local/event-streams.js';
import { JobEventHub } from '../../../functions/manager/job-event-hub.js';

/** A sink that takes `room` writes, then says its client's buffer passed its bound. */
function aSink(room = Number.POSITIVE_INFINITY) {
  const written: string[] = [];
  let onClose: () => void = () => {};
  const state = { ended: false, dropped: false };
  const close = () => onClose();
  const sink: StreamSink = {
    write: (text) => {
      written.push(text);
      return written.length <= room;
    },
    end: () => {
      state.ended = true;
      close();
    },
    drop: () => {
      state.dropped = true;
      close();
    },
    onClose: (handler) => {
      onClose = handler;
    },
  };
  return { sink, written, state };
}

const job = (seqs: number[]) =>
  ({
    id: 'j1',
    workflow: 'flow',
    history: seqs.map((seq) => ({ seq, at: seq, kind: 'step.completed' })),
  }) as unknown as JobRecord;

describe('EventStreams', () => {
  it('refuses a stream beyond its most (429), and takes one again once one closed', () => {
    const streams = new EventStreams(new JobEventHub(), new AbortController().signal, {
      maxStreams: 2,
      heartbeatMs: 60_000,
    });
    const first = aSink();
    streams.open({ namespace: 'default' }, undefined)(first.sink);
    streams.open({ namespace: 'default' }, undefined)(aSink().sink);
    expect(() => streams.open({ namespace: 'default' }, undefined)).toThrow(
      expect.objectContaining({ status: 429 }),
    );
    first.sink.end();
    expect(() => streams.open({ namespace: 'default' }, undefined)).not.toThrow();
  });

  it('drops a client that cannot keep up instead of buffering for it', () => {
    const hub = new JobEventHub();
    const streams = new EventStreams(hub, new AbortController().signal);
    const slow = aSink(2);
    streams.open({ namespace: 'default' }, undefined)(slow.sink);
    hub.publish(job([1, 2, 3, 4, 5]), 0);
    expect(slow.state.dropped).toBe(true);
    expect(slow.written).toHaveLength(3);
    expect(hub.streams).toBe(0);
  });

  it('pings an idle stream, and ends every stream on shutdown', async () => {
    const shutdown = new AbortController();
    const streams = new EventStreams(new JobEventHub(), shutdown.signal, { maxStreams: 5, heartbeatMs: 5 });
    const idle = aSink();
    streams.open({ namespace: 'default' }, undefined)(idle.sink);
    await expect.poll(() => idle.written.includes(': ping\n\n')).toBe(true);
    shutdown.abort();
    expect(idle.state.ended).toBe(true);
    expect(streams.count).toBe(0);
  });
});
