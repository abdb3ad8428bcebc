import { describe, expect, it } from 'vitest';
import type { HistoryEntry, JobRecord } from '../../../engine/index.js';
import { JobEventHub } from '../../../functions/manager/job-event-hub.js';

const entry = (seq: number): HistoryEntry => ({
  seq,
  at: 1_000 + seq,
  kind: 'step.completed',
  step: `s${seq}`,
});
const job = (id: string, workflow: string, seqs: number[]) =>
  ({ id, workflow, history: seqs.map(entry) }) as unknown as JobRecord;

describe('JobEventHub', () => {
  it('keeps nothing until a stream subscribes', () => {
    const hub = new JobEventHub();
    hub.publish(job('j1', 'flow', [1, 2]), 0);
    expect(hub.listening).toBe(false);
    const seen: string[] = [];
    const { replay } = hub.subscribe({ namespace: 'default' }, (event) => seen.push(event.id), 'unknown.0');
    expect(replay).toEqual({ kind: 'reset' });
    expect(seen).toEqual([]);
  });

  it('hands over only the entries after the seq the job had, with its namespace and workflow', () => {
    const hub = new JobEventHub();
    const seen: unknown[] = [];
    hub.subscribe({ namespace: 'team-a' }, (event) => seen.push(event));
    hub.publish(job('j1', 'team-a/flow', [1, 2, 3]), 2);
    hub.publish(job('j2', 'flow', [1]), 0);
    expect(seen).toEqual([
      expect.objectContaining({
        seq: 3,
        jobId: 'j1',
        workflow: 'flow',
        namespace: 'team-a',
        kind: 'step.completed',
      }),
    ]);
  });

  it('resumes after a cursor within its window, and says reset for one that fell out of it', () => {
    const hub = new JobEventHub(3);
    const ids: string[] = [];
    hub.subscribe({ namespace: 'default' }, (event) => ids.push(event.id));
    hub.publish(job('j1', 'flow', [1, 2, 3, 4, 5]), 0);
    const resumed = hub.subscribe({ namespace: 'default' }, () => {}, ids[2]);
    expect(resumed.replay).toEqual({
      kind: 'events',
      events: [expect.objectContaining({ seq: 4 }), expect.objectContaining({ seq: 5 })],
    });
    // Kept: events 3 to 5; after event 1, event 2 is gone.
    expect(hub.subscribe({ namespace: 'default' }, () => {}, ids[0]).replay).toEqual({ kind: 'reset' });
    expect(hub.subscribe({ namespace: 'default' }, () => {}, ids[1]).replay).toMatchObject({
      kind: 'events',
    });
    expect(hub.subscribe({ namespace: 'default' }, () => {}, ids[4]).replay).toEqual({
      kind: 'events',
      events: [],
    });
  });

  it('keeps its window across many events (past the point where it cuts its array)', () => {
    const hub = new JobEventHub(3);
    const ids: string[] = [];
    hub.subscribe({ namespace: 'default' }, (event) => ids.push(event.id));
    for (let seq = 1; seq <= 10; seq++) hub.publish(job('j1', 'flow', [seq]), seq - 1);
    const seqsAfter = (n: number) => {
      const { replay } = hub.subscribe({ namespace: 'default' }, () => {}, ids[n - 1]);
      return replay?.kind === 'events' ? replay.events.map((event) => event.seq) : replay?.kind;
    };
    expect(seqsAfter(7)).toEqual([8, 9, 10]);
    expect(seqsAfter(8)).toEqual([9, 10]);
    expect(seqsAfter(10)).toEqual([]);
    expect(seqsAfter(6)).toBe('reset');
  });

  it('stops handing over once unsubscribed', () => {
    const hub = new JobEventHub();
    const seen: string[] = [];
    const { unsubscribe } = hub.subscribe({ namespace: 'default' }, (event) => seen.push(event.id));
    hub.publish(job('j1', 'flow', [1]), 0);
    unsubscribe();
    hub.publish(job('j1', 'flow', [1, 2]), 1);
    expect(seen).toHaveLength(1);
    expect(hub.streams).toBe(0);
  });
});
