/*
 * The benchmark's workloads, the same for every runtime:
 * - the diamond: s1; s2 and s3 after s1; s4 after both. 4 steps a job.
 * - the fan-out: `list` returns `count` items; `each` runs the one-step task `per-item` once per item;
 *   `sum` runs after the fan-in with every child's result. N + 2 steps (list, N children, sum).
 * A step is one request sent and its reply processed; the workers do no work (they reply `{}`,
 * `list` replies the items).
 */

export const DIAMOND = 'bench-diamond';
export const FAN_OUT = 'bench-fan-out';
export const DIAMOND_STEPS = 4;
export const fanOutSteps = (items: number): number => items + 2;
/** Diamond jobs started at once: the driver's HTTP requests in flight, BullMQ's adds, the core's starts. */
export const SUBMIT_CONCURRENCY = 20;

/** Step queues of one run, all under a prefix no other run uses, so that leftovers never mix in. */
export interface BenchQueues {
  s1: string;
  s2: string;
  s3: string;
  s4: string;
  list: string;
  work: string;
  sum: string;
}

export function benchQueues(prefix: string): BenchQueues {
  return {
    s1: `${prefix}s1`,
    s2: `${prefix}s2`,
    s3: `${prefix}s3`,
    s4: `${prefix}s4`,
    list: `${prefix}list`,
    work: `${prefix}work`,
    sum: `${prefix}sum`,
  };
}

/** The queues whose workers reply `{}` (all but `list`). */
export function noOpQueues(queues: BenchQueues): string[] {
  return [queues.s1, queues.s2, queues.s3, queues.s4, queues.work, queues.sum];
}

/** Both workflows as a Switchyard workflow file. */
export function benchWorkflowsYaml(queues: BenchQueues): string {
  return `workflows:
  - name: ${DIAMOND}
    steps:
      - name: s1
        queue: ${queues.s1}
      - name: s2
        queue: ${queues.s2}
        depends: [s1]
      - name: s3
        queue: ${queues.s3}
        depends: [s1]
      - name: s4
        queue: ${queues.s4}
        depends: [s2, s3]
  - name: ${FAN_OUT}
    steps:
      - name: list
        queue: ${queues.list}
      - name: each
        task: per-item
        depends: [list]
      - name: sum
        queue: ${queues.sum}
        depends: [each]
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
            queue: ${queues.work}
`;
}

/** What the `list` worker replies for `{ count }`. */
export function listItems(input: Record<string, unknown>): { items: number[] } {
  const count = Number(input.count ?? 0);
  return { items: Array.from({ length: count }, (_, n) => n) };
}
