import type { StepNode } from '../definition/compile.js';
import type { JobRecord, StepState } from './types.js';

/**
 * A step named through the jobs it runs in (`POST /api/job/{id}/signal/{path}`): `approve` is a step
 * of the job itself; `publish/approve` the step `approve` of the job the `workflow:` step `publish`
 * runs (its current attempt's); `review[2]/approve` the step `approve` of child 2 (from 0, in the
 * order of the fan-out's list) of the fan-out step `review`. Hops nest: `a[0]/b/c`.
 */
export interface StepPathHop {
  step: string;
  /** A fan-out step's child, by its index in the list. */
  index?: number;
}

export interface StepPath {
  hops: StepPathHop[];
  /** The step at the end, in the last job reached. */
  step: string;
}

const HOP = /^([A-Za-z][A-Za-z0-9_-]*)(?:\[(\d{1,9})\])?$/;
const LAST = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** At most this many hops: deeper paths are refused before any job is read. */
export const MAX_STEP_PATH_HOPS = 32;

export function parseStepPath(text: string): StepPath | { error: string } {
  const parts = text.split('/');
  const last = parts.pop() as string;
  if (!LAST.test(last)) return { error: `"${last}" is not a step name` };
  if (parts.length > MAX_STEP_PATH_HOPS)
    return { error: `a step path has at most ${MAX_STEP_PATH_HOPS} hops` };
  const hops: StepPathHop[] = [];
  for (const part of parts) {
    const match = HOP.exec(part);
    if (!match) return { error: `"${part}" is neither a step name nor a fan-out child (step[index])` };
    hops.push(
      match[2] === undefined
        ? { step: match[1] as string }
        : { step: match[1] as string, index: Number(match[2]) },
    );
  }
  return { hops, step: last };
}

/** Where one hop of a path leads from a job: the job a call runs (or will run), a fan-out's child, or nowhere (why). */
export type HopTarget =
  | { kind: 'job'; id: string }
  /** A `workflow:` step that has not started its called job yet: this job keeps the signal (call-path-signals.ts). */
  | { kind: 'keep' }
  | { kind: 'child'; step: string; index: number }
  | { kind: 'refuse'; code: 'conflict' | 'invalid'; reason: string };

/** The rule of one hop: `node` is the hop's step in `job`'s graph (undefined: no such step). */
export function hopTarget(
  job: Pick<JobRecord, 'id'>,
  hop: StepPathHop,
  node: Pick<StepNode, 'kind'> | undefined,
  state: StepState | undefined,
): HopTarget {
  const where = `job ${job.id}`;
  if (!node || !state)
    return { kind: 'refuse', code: 'invalid', reason: `${where} has no step "${hop.step}"` };
  if (node.kind === 'call') {
    if (hop.index !== undefined)
      return {
        kind: 'refuse',
        code: 'invalid',
        reason: `step "${hop.step}" is a workflow: step, not a fan-out: name it without [index]`,
      };
    if (state.job === undefined) {
      if (state.status === 'waiting') return { kind: 'keep' };
      return {
        kind: 'refuse',
        code: 'conflict',
        reason: `step "${hop.step}" of ${where} is ${state.status}: it has no called job`,
      };
    }
    return { kind: 'job', id: state.job };
  }
  if (node.kind === 'fanout') {
    if (hop.index === undefined)
      return {
        kind: 'refuse',
        code: 'invalid',
        reason: `step "${hop.step}" is a fan-out: name one of its children as ${hop.step}[index]`,
      };
    const total = state.children?.total;
    if (total === undefined)
      return {
        kind: 'refuse',
        code: 'conflict',
        reason: `step "${hop.step}" of ${where} has not created its children yet`,
      };
    if (hop.index >= total)
      return {
        kind: 'refuse',
        code: 'invalid',
        reason: `step "${hop.step}" of ${where} has ${total} children (0 to ${total - 1})`,
      };
    return { kind: 'child', step: hop.step, index: hop.index };
  }
  return {
    kind: 'refuse',
    code: 'invalid',
    reason: `step "${hop.step}" is a ${node.kind} step: a path goes through workflow: steps and fan-outs only`,
  };
}
