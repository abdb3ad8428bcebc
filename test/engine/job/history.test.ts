import { describe, expect, it } from 'vitest';
import {
  appendHistory,
  applyEvent,
  createJob,
  type HistoryEntry,
  historyPage,
  type JobRecord,
  MAX_HISTORY_ENTRIES,
  MAX_WORKER_NAME,
  replyEvent,
} from '../../../engine/index.js';
import { compiled, T0 } from '../../support/simulated-world.js';

const ID = '0b7c2a4e-3f1d-4e8a-9c6b-1d2e3f4a5b6c';
const WORKFLOW = compiled(`workflows:
  - name: loop
    steps:
      - name: poll
        timeout: 10s
        retries: 3
      - name: fan
        task: item
        depends: [ poll ]
    tasks:
      - name: item
        itemListKey: items
        steps:
          - name: work
`);

const kinds = (job: JobRecord) => (job.history ?? []).map((entry) => entry.kind);

describe('Rule: a job records what happened to it, and who did it', () => {
  it('names the actor of the start, the worker of a reply, and a fan-out child’s own creation', () => {
    const start = createJob(
      WORKFLOW,
      { id: ID, input: {}, actor: { kind: 'token', id: 'abc', description: 'ci' } },
      { now: T0 },
    );
    expect(start.job.history).toEqual([
      { seq: 1, at: T0, kind: 'job.created', actor: { kind: 'token', id: 'abc', description: 'ci' } },
      { seq: 2, at: T0, kind: 'step.requested', step: 'poll', attempt: 1 },
    ]);
    const reply = replyEvent({
      correlationId: `${ID}:poll`,
      body: '{"items":[1]}',
      worker: `  ${'w'.repeat(MAX_WORKER_NAME + 50)}  `,
    });
    if (!reply.ok) throw new Error(reply.reason);
    const next = applyEvent(WORKFLOW, start.job, reply.event, { now: T0 + 5 });
    expect(next.job.history?.slice(2)).toEqual([
      {
        seq: 3,
        at: T0 + 5,
        kind: 'step.completed',
        step: 'poll',
        attempt: 1,
        worker: 'w'.repeat(MAX_WORKER_NAME),
      },
      { seq: 4, at: T0 + 5, kind: 'step.requested', step: 'fan', attempt: 1 },
    ]);
    const [child] = next.creates;
    expect(kinds(child as JobRecord)).toEqual(['job.created', 'step.requested']);
    expect(child?.history?.[0]?.actor).toBeUndefined();
  });

  it('records nothing for an event that changes nothing (a duplicate reply, a refused command)', () => {
    const start = createJob(WORKFLOW, { id: ID, input: {} }, { now: T0 });
    const ignored = applyEvent(
      WORKFLOW,
      start.job,
      { type: 'reply', step: 'fan', output: {} },
      { now: T0 + 1 },
    );
    expect(ignored.changed).toBe(false);
    const refused = applyEvent(
      WORKFLOW,
      start.job,
      { type: 'retry', actor: { kind: 'root' } },
      { now: T0 + 1 },
    );
    expect(refused.rejected?.code).toBe('conflict');
    expect(refused.job.history).toEqual(start.job.history);
  });

  it('keeps the first entry and the latest, at most MAX_HISTORY_ENTRIES, numbering on', () => {
    let job = createJob(WORKFLOW, { id: ID, input: {}, actor: { kind: 'root' } }, { now: T0 }).job;
    const ops = { kind: 'token' as const, id: 'ops' };
    for (let n = 1; n <= MAX_HISTORY_ENTRIES; n++) {
      job = applyEvent(WORKFLOW, job, { type: 'pause', actor: ops }, { now: T0 + n }).job;
      job = applyEvent(WORKFLOW, job, { type: 'resume', actor: ops }, { now: T0 + n }).job;
    }
    const history = job.history as HistoryEntry[];
    expect(history).toHaveLength(MAX_HISTORY_ENTRIES);
    expect(history[0]).toMatchObject({ seq: 1, kind: 'job.created', actor: { kind: 'root' } });
    const last = history.at(-1) as HistoryEntry;
    expect(last).toMatchObject({ kind: 'job.resumed', actor: ops, at: T0 + MAX_HISTORY_ENTRIES });
    // Each pause and resume adds one entry to the first two.
    expect(last.seq).toBe(2 + 2 * MAX_HISTORY_ENTRIES);
    for (let i = 2; i < history.length; i++) expect(history[i]?.seq).toBe((history[i - 1]?.seq ?? 0) + 1);
    expect(historyPage(history, 0, 10).dropped).toBe(last.seq - MAX_HISTORY_ENTRIES);
  });

  it('cuts long messages, and pages from a seq whatever was left out before it', () => {
    const long = appendHistory(undefined, [{ at: T0, kind: 'step.failed', message: 'x'.repeat(10) }]);
    expect(long[0]?.seq).toBe(1);
    const history = appendHistory(
      undefined,
      Array.from({ length: 7 }, (_, n) => ({ at: T0 + n, kind: 'step.requested' as const, attempt: n + 1 })),
    );
    const first = historyPage(history, 0, 3);
    expect(first.entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(first.next).toBe(3);
    const last = historyPage(history, 6, 3);
    expect(last.entries.map((entry) => entry.seq)).toEqual([7]);
    expect(last.next).toBeUndefined();
    expect(historyPage(history, 99, 3)).toEqual({ entries: [], dropped: 0 });
    expect(historyPage(undefined, 0, 3)).toEqual({ entries: [], dropped: 0 });
  });

  it('keeps the first entry and the latest when full, whatever the sizes of the history and of what a transition adds', () => {
    const entries = (from: number, count: number) =>
      Array.from({ length: count }, (_, n) => ({ at: T0 + from + n, kind: 'step.requested' as const }));
    for (const before of [0, 1, 150, MAX_HISTORY_ENTRIES - 1, MAX_HISTORY_ENTRIES]) {
      for (const added of [0, 1, 2, 60, MAX_HISTORY_ENTRIES + 7]) {
        const history = before ? appendHistory(undefined, entries(0, before)) : undefined;
        const after = appendHistory(history, entries(before, added));
        const total = before + added;
        const seqs = after.map((entry) => entry.seq);
        const expected =
          total <= MAX_HISTORY_ENTRIES
            ? Array.from({ length: total }, (_, n) => n + 1)
            : [
                1,
                ...Array.from(
                  { length: MAX_HISTORY_ENTRIES - 1 },
                  (_, n) => total - MAX_HISTORY_ENTRIES + 2 + n,
                ),
              ];
        expect(seqs, `${before} then ${added}`).toEqual(expected);
        expect(after.every((entry) => entry !== undefined)).toBe(true);
      }
    }
  });
});
