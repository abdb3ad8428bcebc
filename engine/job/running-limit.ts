import { isFinished, type JobRecord } from './types.js';

/*
 * `maxRunning: N` on a workflow (docs/workflows.md, "At most N jobs at once").
 *
 * A store keeps, per workflow name, a counter of the top-level jobs that hold a slot (`running`), of
 * those waiting in its queue (`queued`), and the number the next queued job takes (`nextSeq`), with
 * the queue itself in that order. Every change to them is written in the same atomic commit as the
 * job status that makes it, conditional on what this rule read (`LimitChange`): a commit whose
 * condition no longer holds writes nothing, and the manager reads again and decides anew.
 *
 * - A top-level job that starts takes a slot when one is free and nobody queues before it, or else
 *   waits as `queued`, at the end of the queue.
 * - A job holding a slot keeps it while running or paused, and gives it back when it ends (any
 *   finished status). That commit carries a `promoteQueued` follow-up, so the job whose turn comes
 *   is started even if the manager dies right after the commit (the outbox survives it).
 * - A queued job whose turn came is `promote`d: it takes a slot and starts. Cancelled (or aborted)
 *   while queued, it leaves the queue without having used a slot.
 * - The limit is the latest registered version's `maxRunning`; a job keeps the slot it took
 *   (`holdsSlot`) whatever later versions say, so each slot is given back exactly once.
 */

/** A workflow's counters as a store keeps them. */
export interface RunningCount {
  /** Top-level jobs holding a slot: running or paused. */
  running: number;
  /** Jobs in the queue. */
  queued: number;
  /** The place the next queued job takes (places only grow: the queue's order). */
  nextSeq: number;
}

/** A workflow's limit with its counters as read before a transition. */
export interface RunningLimit {
  max: number;
  count: RunningCount;
}

export function zeroRunningCount(): RunningCount {
  return { running: 0, queued: 0, nextSeq: 0 };
}

/** How a top-level job that is to run starts. */
export type Admission = { kind: 'run'; slot: boolean } | { kind: 'queue'; seq: number };

/**
 * A job starts at once when its workflow has no limit (holding no slot), or when a slot is free and
 * no job queues before it (taking it); otherwise it queues last.
 */
export function admit(limit: RunningLimit | undefined): Admission {
  if (!limit) return { kind: 'run', slot: false };
  const { running, queued, nextSeq } = limit.count;
  if (running < limit.max && queued === 0) return { kind: 'run', slot: true };
  return { kind: 'queue', seq: nextSeq };
}

/** A queued job may start when its workflow has no limit any more, or a slot is free. */
export function mayPromote(limit: RunningLimit | undefined): boolean {
  return !limit || limit.count.running < limit.max;
}

/** How many queued jobs may start now (undefined: as many as are queued). */
export function freeSlots(limit: RunningLimit | undefined): number | undefined {
  return limit && Math.max(0, limit.max - limit.count.running);
}

/**
 * What a store does to a workflow's counters with a job's commit, and the condition it checks
 * (nothing is written when it fails):
 * - `take`: running + 1, if running < max and nothing is queued;
 * - `enqueue`: queued + 1 with the job at place `seq`, if `seq` is still the next place and the job
 *   has to wait (running ≥ max, or others queued);
 * - `promote`: running + 1, queued − 1, the job's place removed, if running < max;
 * - `dequeue`: queued − 1, the job's place removed (it left the queue without a slot);
 * - `release`: running − 1.
 */
export type LimitChange =
  | { op: 'take'; workflow: string; max: number }
  | { op: 'enqueue'; workflow: string; max: number; seq: number; jobId: string }
  | { op: 'promote'; workflow: string; max: number; seq: number }
  | { op: 'dequeue'; workflow: string; seq: number }
  | { op: 'release'; workflow: string };

/** The parts of a job the limit reads. */
export type SlotState = Pick<JobRecord, 'id' | 'workflow' | 'status' | 'holdsSlot' | 'queueSeq'>;

/**
 * The change to the counters from a job's state `before` a transition (undefined: a new job) to its
 * state `after`. `max`: the limit the transition was decided under.
 */
export function limitChange(
  before: SlotState | undefined,
  after: SlotState,
  max: number | undefined,
): LimitChange | undefined {
  const workflow = after.workflow;
  const heldBefore = before?.holdsSlot === true;
  const holds = after.holdsSlot === true;
  const queuedBefore = before?.status === 'queued' ? before.queueSeq : undefined;
  if (heldBefore && !holds) return { op: 'release', workflow };
  if (!heldBefore && holds) {
    if (max === undefined) throw new Error(`job ${after.id} took a slot without a limit`);
    return queuedBefore === undefined
      ? { op: 'take', workflow, max }
      : { op: 'promote', workflow, max, seq: queuedBefore };
  }
  if (queuedBefore !== undefined && after.status !== 'queued')
    return { op: 'dequeue', workflow, seq: queuedBefore };
  if (queuedBefore === undefined && after.status === 'queued') {
    if (max === undefined || after.queueSeq === undefined)
      throw new Error(`job ${after.id} queued without a limit or a place`);
    return { op: 'enqueue', workflow, max, seq: after.queueSeq, jobId: after.id };
  }
  return undefined;
}

/** A job that ended gives its slot back: true when it held one and has now finished. */
export function releasesSlot(job: SlotState): boolean {
  return job.holdsSlot === true && isFinished(job.status);
}

/** One counter compared with a number; a counter a store has never written is 0. */
export interface CounterTest {
  counter: keyof RunningCount;
  is: '<' | '>=' | '=' | '>';
  value: number;
}

/**
 * The condition of a change (see `LimitChange`) as data: every test of `all` holds, and one of
 * `any` when it is given. `changeAllowed` evaluates it; a store that writes conditionally (DynamoDB)
 * states the same tests in its own condition language, so the rule is written once, here.
 */
export interface LimitCondition {
  all: CounterTest[];
  any?: CounterTest[];
}

export function limitCondition(change: LimitChange): LimitCondition {
  switch (change.op) {
    case 'take':
      return {
        all: [
          { counter: 'running', is: '<', value: change.max },
          { counter: 'queued', is: '=', value: 0 },
        ],
      };
    case 'enqueue':
      return {
        all: [{ counter: 'nextSeq', is: '=', value: change.seq }],
        any: [
          { counter: 'running', is: '>=', value: change.max },
          { counter: 'queued', is: '>', value: 0 },
        ],
      };
    case 'promote':
      return { all: [{ counter: 'running', is: '<', value: change.max }] };
    case 'dequeue':
    case 'release':
      return { all: [] };
  }
}

export function counterTestHolds(value: number, test: Pick<CounterTest, 'is' | 'value'>): boolean {
  switch (test.is) {
    case '<':
      return value < test.value;
    case '>=':
      return value >= test.value;
    case '=':
      return value === test.value;
    case '>':
      return value > test.value;
  }
}

/** What a change writes to the counters, as data: it adds to `running` and `queued`, and sets `nextSeq`. */
export interface LimitEffect {
  add: Partial<Record<'running' | 'queued', number>>;
  nextSeq?: number;
}

export function limitEffect(change: LimitChange): LimitEffect {
  switch (change.op) {
    case 'take':
      return { add: { running: 1 } };
    case 'enqueue':
      return { add: { queued: 1 }, nextSeq: change.seq + 1 };
    case 'promote':
      return { add: { running: 1, queued: -1 } };
    case 'dequeue':
      return { add: { queued: -1 } };
    case 'release':
      return { add: { running: -1 } };
  }
}

/** A counter after a change (what the stores write, and what tests of them expect). */
export function countAfter(count: RunningCount, change: LimitChange): RunningCount {
  const { add, nextSeq } = limitEffect(change);
  return {
    running: count.running + (add.running ?? 0),
    queued: count.queued + (add.queued ?? 0),
    nextSeq: nextSeq ?? count.nextSeq,
  };
}

/** Whether a store may apply `change` to `count` (see `LimitChange`). */
export function changeAllowed(count: RunningCount, change: LimitChange): boolean {
  const { all, any } = limitCondition(change);
  const holds = (test: CounterTest) => counterTestHolds(count[test.counter], test);
  return all.every(holds) && (any === undefined || any.some(holds));
}
