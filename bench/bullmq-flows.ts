import type { FlowJob } from 'bullmq';
import type { BenchQueues } from './workloads.js';

/*
 * The same workloads as BullMQ flows, as a BullMQ user would write them. A flow is a tree: a parent
 * runs once all its children completed, and reads their results with `getChildrenValues()`.
 *
 * Diamond (s1; s2, s3 after s1; s4 after both). A tree cannot have s2 and s3 both wait for s1 and
 * s4 wait for both, so s1 is a plain job whose processor, when its work is done, adds the flow
 * "s4 is the parent of s2 and s3" (s4 reads their results as Switchyard's s4 receives their merged
 * outputs). 4 jobs, 4 steps.
 *
 * Fan-out (list; N children; sum). `list` is a plain job whose processor adds the flow "sum is the
 * parent of N `work` children", one FlowProducer.add (atomic: all or none); `sum` reads every
 * child's result, as Switchyard's fan-in gathers them. N + 2 jobs, N + 2 steps.
 */

export const diamondFlow = (queues: BenchQueues): FlowJob => ({
  name: 's4',
  queueName: queues.s4,
  data: {},
  children: [
    { name: 's2', queueName: queues.s2, data: {} },
    { name: 's3', queueName: queues.s3, data: {} },
  ],
});

export const fanOutFlow = (queues: BenchQueues, items: readonly number[]): FlowJob => ({
  name: 'sum',
  queueName: queues.sum,
  data: {},
  children: items.map((item) => ({ name: 'work', queueName: queues.work, data: { item } })),
});
