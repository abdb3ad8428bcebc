import { describe, expect, it } from 'vitest';
import type { JobDocument } from '../../../functions/api/job-document.js';
import {
  currentSteps,
  FanOutRates,
  queueHint,
  type StepInfo,
  waitingSteps,
} from '../../../functions/cli/job-view.js';
import { colourFor, humanDuration, paint, renderTable } from '../../../functions/cli/terminal.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function job(steps: JobDocument['steps']): JobDocument {
  return {
    uuid: '3f0c9a52-8a55-4f5e-9d43-1c2f1f3a6b7e',
    workflow: 'book-word-counts',
    version: 1,
    parent: null,
    index: null,
    task: null,
    status: 'running',
    input: {},
    createdAt: iso(0),
    updatedAt: iso(0),
    steps,
    running: [],
    completed: [],
  };
}

describe('watch: the steps running, a fan-out rate and ETA', () => {
  it('gives a fan-out its rate and time left once children finish between two looks', () => {
    const rates = new FanOutRates();
    expect(rates.describe('section-counts', 100, 400, T0)).toBe('100/400 children');
    expect(rates.describe('section-counts', 100, 400, T0 + 1_000)).toBe('100/400 children');
    expect(rates.describe('section-counts', 150, 400, T0 + 10_000)).toBe(
      '150/400 children, 5.0/s, ETA 50.0s',
    );
    expect(rates.describe('section-counts', 400 - 10, 400, T0 + 20_000)).toBe(
      '390/400 children, 15/s, ETA 690ms',
    );
  });

  it('names each running step: a worker one "in queue or running", a signal waiting, a fan-out with its children', () => {
    const steps = new Map<string, StepInfo>([
      ['store-title', { kind: 'worker', queue: 'store-title' }],
      ['approve', { kind: 'signal' }],
      ['section-counts', { kind: 'fanout', task: 'word-counts' }],
    ]);
    const document = job({
      'book-split': { status: 'completed', attempt: 1, attempts: [], startedAt: iso(0), endedAt: iso(500) },
      'section-counts': {
        status: 'running',
        attempt: 1,
        attempts: [],
        startedAt: iso(500),
        children: 12,
        childrenDone: 7,
      },
      'store-title': {
        status: 'running',
        attempt: 1,
        attempts: [{ attempt: 1, sentAt: iso(0) }],
        startedAt: iso(0),
      },
      approve: {
        status: 'running',
        attempt: 1,
        attempts: [{ attempt: 1, sentAt: iso(1_000) }],
        startedAt: iso(1_000),
      },
    });
    expect(currentSteps(document, new FanOutRates(), steps, T0 + 3_000)).toBe(
      'running: section-counts (7/12 children), store-title (in queue or running for 3.0s), approve (waiting for its signal for 2.0s)',
    );
    expect(
      currentSteps(job({ a: { status: 'completed', attempt: 1, attempts: [] } }), new FanOutRates()),
    ).toBeUndefined();
  });
});

describe('the queue warning', () => {
  const report = { queue: 'pricing', vhost: null, steps: [] };

  it('speaks of a queue with no consumer, or none at all, and not of one that has a consumer or cannot tell', () => {
    expect(queueHint({ ...report, exists: true, ready: 5, consumers: 0 })).toBe(
      'queue pricing: 5 ready, 0 consumers — is a worker listening on "pricing"?',
    );
    expect(queueHint({ ...report, vhost: 'shop', exists: true, ready: 5, consumers: 0 })).toBe(
      'queue pricing (vhost shop): 5 ready, 0 consumers — is a worker listening on "pricing"?',
    );
    expect(queueHint({ ...report, exists: false })).toBe(
      'queue pricing does not exist — is a worker listening on "pricing"?',
    );
    expect(queueHint({ ...report, exists: true, ready: 5, consumers: 2 })).toBeUndefined();
    expect(queueHint({ ...report, exists: true, ready: 5, consumers: 'unknown' })).toBeUndefined();
    expect(queueHint({ ...report, exists: false, error: 'RabbitMQ is not reachable' })).toBeUndefined();
  });
});

describe('the terminal', () => {
  it('colours a terminal only, never with NO_COLOR, and when FORCE_COLOR asks', () => {
    expect(colourFor({ isTTY: true }, {})).toBe(true);
    expect(colourFor({ isTTY: false }, {})).toBe(false);
    expect(colourFor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourFor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colourFor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourFor({ isTTY: false }, { FORCE_COLOR: '' })).toBe(false);
    expect(colourFor({ isTTY: true }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(false);
  });

  it('aligns table columns on their visible width, colours aside', () => {
    const p = paint(true);
    const table = renderTable(
      ['ID', 'STATUS', 'ERROR'],
      [
        ['a', p.status('failed'), 'boom'],
        ['bb', 'ok', ''],
      ],
      p,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are removed to compare
    expect(table.replace(/\u001b\[\d+m/g, '')).toBe('ID  STATUS  ERROR\na   failed  boom\nbb  ok');
  });

  it('says durations as people read them', () => {
    expect(humanDuration(850)).toBe('850ms');
    expect(humanDuration(4_200)).toBe('4.2s');
    expect(humanDuration(185_000)).toBe('3m 05s');
    expect(humanDuration(2 * 3600_000 + 4 * 60_000)).toBe('2h 04m');
    expect(humanDuration(-1)).toBe('');
  });
});

describe('watch: the steps that wait for someone', () => {
  it('leaves them out of the running steps and gives each its own line, with the command that lets it go on', () => {
    const document: JobDocument = {
      ...job({
        fetch: {
          status: 'running',
          attempt: 1,
          attempts: [{ attempt: 1, sentAt: iso(0) }],
          startedAt: iso(0),
        },
        approve: { status: 'running', attempt: 1, attempts: [], startedAt: iso(1_000) },
        check: {
          status: 'suspended',
          attempt: 1,
          attempts: [],
          startedAt: iso(0),
          suspendNote: 'ask finance',
        },
      }),
      waitingFor: [
        { step: 'approve', kind: 'signal', since: iso(1_000) },
        { step: 'check', kind: 'suspended', since: iso(500), note: 'ask finance' },
      ],
    };
    const steps = new Map<string, StepInfo>([
      ['fetch', { kind: 'worker', queue: 'fetch' }],
      ['approve', { kind: 'signal' }],
      ['check', { kind: 'worker', queue: 'check' }],
    ]);
    expect(currentSteps(document, new FanOutRates(), steps, T0 + 3_000)).toBe(
      'running: fetch (in queue or running for 3.0s)',
    );
    expect(waitingSteps(document, undefined, T0 + 3_000)).toEqual([
      `waiting: approve (waiting for its signal 2.0s) → switchyard signal ${document.uuid} approve --input '{}'`,
      `waiting: check (suspended 2.5s: ask finance) → switchyard signal ${document.uuid} check --input '{}'`,
    ]);
  });
});
